/**
 * Start-up work a listening instance has not finished yet (issue 35). `weir serve` listens as
 * soon as the database is open and the orchestrator runs, and loads the pipeline files after:
 * health answers a second or so earlier. Until that work ends, `GET /system/ready` answers 503
 * naming it (api/system.ts), and requests whose answer depends on the pipeline files (configs,
 * executions, pipelines, replay, reload) wait for it here instead of seeing the configs of
 * the previous start, or a run the file would start missing. A wait longer than
 * `STARTUP_WAIT_MS` answers 503 `service_starting`.
 */
import type { FastifyInstance } from 'fastify';
import { AppError } from '../errors.js';

/** Far longer than loading the pipeline files takes (about a second under load). */
export const STARTUP_WAIT_MS = 15_000;

/** The routes whose answer the pipeline files change (route patterns, prefix `/api/v1`). */
const PIPELINE_ROUTE_PREFIXES = ['/configs', '/executions', '/pipelines', '/replay', '/system/reload'].map(
  (prefix) => `/api/v1${prefix}`,
);

export class StartupWork {
  private readonly underWay = new Map<string, Promise<void>>();

  /**
   * Marks `name` as under way; the returned function ends it. Begun before the server
   * listens, so no request can come before the gate knows of the work.
   */
  begin(name: string): () => void {
    let end: () => void = () => undefined;
    this.underWay.set(
      name,
      new Promise<void>((resolve) => {
        end = resolve;
      }),
    );
    return () => {
      this.underWay.delete(name);
      end();
    };
  }

  /** Whether anything is still under way (asked on every request, so without an array). */
  get underWayNow(): boolean {
    return this.underWay.size > 0;
  }

  /** What is still under way, for the readiness probe; empty once the instance has started. */
  pending(): string[] {
    return [...this.underWay.keys()];
  }

  /** Resolves once nothing is under way, or with false after `milliseconds`. */
  async whenDone(milliseconds: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), milliseconds);
    });
    try {
      while (this.underWay.size > 0) {
        const done = await Promise.race([Promise.all(this.underWay.values()).then(() => true), timeout]);
        if (!done) return false;
      }
      return true;
    } finally {
      clearTimeout(timer);
    }
  }
}

/** Holds requests to the pipeline routes until the start-up work has ended. */
export function installStartupGate(app: FastifyInstance, work: StartupWork | undefined): void {
  if (!work) return;
  app.addHook('onRequest', async (request) => {
    if (!work.underWayNow) return;
    const route = request.routeOptions.url;
    if (!route || !PIPELINE_ROUTE_PREFIXES.some((prefix) => route.startsWith(prefix))) return;
    if (await work.whenDone(STARTUP_WAIT_MS)) return;
    throw new AppError(
      'service_starting',
      `this instance is still starting (${work.pending().join(', ')}); GET /api/v1/system/ready answers 200 once it has`,
    );
  });
}
