#!/usr/bin/env node
/**
 * The `weir` command line.
 *   weir serve              start the service on the configured host and port
 *   weir validate FILE...   validate pipeline YAML files against the built-in adapters
 *   weir adapters           list the registered adapter types
 *   weir eval FILE          score a running service's search against a question set
 */
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { createBuiltinRegistry } from './adapters/builtin.js';
import { DataDirInUseError } from './db/data-dir-lock.js';
import { validateConfigYaml } from './engine/config/validate-config.js';
import { evalCommand, evalDefaults } from './evaluation/eval-command.js';
import { isRole, startService } from './serve.js';
import { loadSettings, SettingsError } from './settings.js';
import { SERVICE_VERSION } from './version.js';

const usage = `weir ${SERVICE_VERSION}: content pipelines and chat over what they indexed

Usage:
  weir serve [--role R]   start the service (settings from the environment, see README);
                          R = all (default), api (HTTP only) or worker (processing only)
  weir validate FILE...   validate pipeline config files; exit code 1 when one has errors
  weir adapters           list the registered adapter types
  weir eval FILE [--modes M] [--chat] [--url U] [--json] [--limit N]
                          run the questions of FILE (JSON Lines, docs/search-and-chat.md)
                          against a running service; print hit@1/5/10, MRR@10, nDCG@10,
                          latency and misses per mode. M = keyword,vector,rrf (default) and
                          chat; --chat adds chat (its cited sources); U = ${evalDefaults.url};
                          N = segments asked per search (default ${evalDefaults.limit});
                          WEIR_API_KEY = the key to send
  weir --version
`;

async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      help: { type: 'boolean', short: 'h' },
      version: { type: 'boolean', short: 'v' },
      role: { type: 'string', default: 'all' },
      modes: { type: 'string' },
      chat: { type: 'boolean' },
      url: { type: 'string' },
      json: { type: 'boolean' },
      limit: { type: 'string' },
    },
  });
  const [command, ...rest] = positionals;
  if (values.version) {
    process.stdout.write(`${SERVICE_VERSION}\n`);
    return 0;
  }
  if (values.help || !command) {
    process.stdout.write(usage);
    return command || values.help ? 0 : 2;
  }
  switch (command) {
    case 'serve':
      if (!isRole(values.role)) {
        process.stderr.write(
          `weir serve: --role must be all, api or worker, not ${JSON.stringify(values.role)}\n`,
        );
        return 2;
      }
      await startService(process.env, values.role);
      return -1; // keep running until a signal
    case 'validate':
      return validateFiles(rest);
    case 'eval':
      return evalCommand(rest, values);
    case 'adapters':
      for (const definition of createBuiltinRegistry().list()) {
        process.stdout.write(
          `${definition.type.padEnd(28)} ${definition.group.padEnd(12)} ${definition.summary}\n`,
        );
      }
      return 0;
    default:
      process.stderr.write(`unknown command ${JSON.stringify(command)}\n\n${usage}`);
      return 2;
  }
}

async function validateFiles(files: string[]): Promise<number> {
  if (files.length === 0) {
    process.stderr.write('weir validate: name at least one YAML file\n');
    return 2;
  }
  const registry = createBuiltinRegistry();
  // The environment's settings, as `weir serve` would read them: roots, models and LLM
  // profiles are checked against what this deployment configures (E211-E213).
  const settings = loadSettings(process.env);
  let failed = false;
  for (const file of files) {
    let text: string;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      // One line a person can act on, not a stack trace.
      const reason =
        (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message;
      process.stderr.write(`weir validate: cannot read ${file}: ${reason}\n`);
      return 2;
    }
    const report = validateConfigYaml(text, registry, settings);
    failed ||= !report.is_valid;
    const verdict = report.is_valid ? 'valid' : 'INVALID';
    process.stdout.write(
      `${file}: ${verdict} (${report.error_count} errors, ${report.warning_count} warnings)\n`,
    );
    for (const finding of report.findings) {
      const where = finding.line ? `${file}:${finding.line}:${finding.column}` : file;
      process.stdout.write(`  ${finding.code} ${finding.severity} ${where} ${finding.path}\n`);
      process.stdout.write(`    ${finding.message}\n    -> ${finding.remediation}\n`);
    }
  }
  return failed ? 1 : 0;
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (error: unknown) => {
    // Errors a person fixes by changing how Weir is started: one line, no stack.
    const message =
      error instanceof SettingsError || error instanceof DataDirInUseError
        ? error.message
        : ((error as Error).stack ?? String(error));
    process.stderr.write(`weir: ${message}\n`);
    process.exitCode = 1;
  },
);
