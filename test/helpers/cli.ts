/** Runs the `weir` CLI from source (as `npx weir` would after a build) and reports how it ended. */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Node arguments that start the CLI from src/main.ts through tsx. */
export const weirCommand = ['--import', 'tsx', path.resolve('src/main.ts')];

export async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return cliWith({}, ...args);
}

/** `cli` with extra environment variables. */
export async function cliWith(
  environment: Record<string, string>,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [...weirCommand, ...args], {
      env: { ...process.env, ...environment },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}
