#!/usr/bin/env node
/**
 * The `weir` command line (src/cli/usage.ts lists every command and option).
 *   weir serve              start the service on the configured host and port
 *   weir run FILE           run a pipeline file to its end (embedded, or on --url)
 *   weir ask "QUESTION"     answer from what was indexed, with citations (--url)
 *   weir search "QUERY"     ranked sources (--url)
 *   weir validate FILE...   validate pipeline YAML files against the built-in adapters
 *   weir adapters           list the registered adapter types
 *   weir eval FILE          score a running service's search against a question set
 */
import { parseArgs } from 'node:util';
import { ApiCallError, defaultUrl } from './cli/client.js';
import { endQuietlyOnClosedPipe } from './cli/quiet-pipe.js';
import { isCommand, usage } from './cli/usage.js';
import { DataDirInUseError } from './db/data-dir-lock.js';
import { SettingsError } from './settings.js';
import { SERVICE_VERSION } from './version.js';

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      help: { type: 'boolean', short: 'h' },
      version: { type: 'boolean', short: 'v' },
      role: { type: 'string', default: 'all' },
      modes: { type: 'string' },
      mode: { type: 'string' },
      chat: { type: 'boolean' },
      url: { type: 'string' },
      json: { type: 'boolean' },
      limit: { type: 'string' },
    },
  });
}

async function main(argv: string[], environment: NodeJS.ProcessEnv): Promise<number> {
  const fallbackUrl = defaultUrl(environment);
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    // An unknown or malformed option: say which, then how to call weir.
    process.stderr.write(`weir: ${(error as Error).message}\n\n${usage(fallbackUrl)}`);
    return 2;
  }
  const { positionals, values } = parsed;
  const [command, ...rest] = positionals;
  if (values.version) {
    process.stdout.write(`${SERVICE_VERSION}\n`);
    return 0;
  }
  if (command === 'help' || (values.help && (!command || isCommand(command)))) {
    const named = command === 'help' ? rest[0] : command;
    if (named && !isCommand(named)) {
      process.stderr.write(`unknown command ${JSON.stringify(named)}\n\n${usage(fallbackUrl)}`);
      return 2;
    }
    process.stdout.write(usage(fallbackUrl, named));
    return 0;
  }
  if (!command) {
    process.stderr.write(usage(fallbackUrl));
    return 2;
  }
  const url = values.url ?? fallbackUrl;
  switch (command) {
    // Each command loads only its own modules: `weir serve` starts opening the database
    // before it loads the service's (early-database.ts), so the two overlap.
    case 'serve': {
      const role = values.role;
      if (role !== 'all' && role !== 'api' && role !== 'worker') {
        process.stderr.write(`weir serve: --role must be all, api or worker, not ${JSON.stringify(role)}\n`);
        return 2;
      }
      (await import('./early-database.js')).openDatabaseEarly(environment);
      await (await import('./serve.js')).startService(environment, role);
      return -1; // keep running until a signal
    }
    case 'run':
      return (await import('./cli/run-command.js')).runCommand(
        rest,
        { url: values.url, suggestedUrl: fallbackUrl },
        environment,
      );
    case 'ask':
      return (await import('./cli/ask-search.js')).askCommand(rest, { url, json: values.json }, environment);
    case 'search':
      return (await import('./cli/ask-search.js')).searchCommand(
        rest,
        { url, json: values.json, mode: values.mode, limit: values.limit },
        environment,
      );
    case 'validate':
      return (await import('./cli/validate-command.js')).validateCommand(rest);
    case 'eval':
      return (await import('./evaluation/eval-command.js')).evalCommand(
        rest,
        { ...values, url },
        environment,
      );
    case 'adapters':
      for (const definition of (await import('./adapters/builtin.js')).createBuiltinRegistry().list()) {
        process.stdout.write(
          `${definition.type.padEnd(28)} ${definition.group.padEnd(12)} ${definition.summary}\n`,
        );
      }
      return 0;
    default:
      process.stderr.write(`unknown command ${JSON.stringify(command)}\n\n${usage(fallbackUrl)}`);
      return 2;
  }
}

endQuietlyOnClosedPipe();
main(process.argv.slice(2), process.env).then(
  (code) => {
    // A command is done when main resolves: end once stdout has drained, so a handle the
    // embedded engine of `weir run` leaves behind (a worker's MessagePort) cannot hold the
    // process open after its summary, as `weir serve` ends with process.exit after its close.
    if (code >= 0) process.stdout.write('', () => process.exit(code));
  },
  (error: unknown) => {
    // Errors a person fixes by changing how Weir is started or called: one line, no stack.
    const message =
      error instanceof SettingsError || error instanceof DataDirInUseError || error instanceof ApiCallError
        ? error.message
        : (portTaken(error) ?? (error as Error).stack ?? String(error));
    process.stderr.write(`weir: ${message}\n`);
    process.exitCode = 1;
  },
);

/** One line for a port that cannot be listened on (taken, or below 1024 without the right). */
function portTaken(error: unknown): string | undefined {
  const { code, port, address } = error as { code?: string; port?: number; address?: string };
  if ((code !== 'EADDRINUSE' && code !== 'EACCES') || port === undefined) return undefined;
  const why =
    code === 'EADDRINUSE' ? 'is in use by another program (or another Weir)' : 'needs rights this user lacks';
  return `cannot listen on ${address ?? ''}:${port}: the port ${why} (${code}); set PORT, or WEIR_METRICS_PORT for the metrics port, to another`;
}
