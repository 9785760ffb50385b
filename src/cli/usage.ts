/** The help of `weir --help`, `weir help [COMMAND]` and `weir COMMAND --help`: every command and its options. */
import { evalDefaults } from '../evaluation/eval-command.js';
import { SERVICE_VERSION } from '../version.js';

interface CommandHelp {
  synopsis: string;
  lines: string[];
}

export function commandHelp(defaultUrl: string): Record<string, CommandHelp> {
  // U's default follows PORT, the port `weir serve` listens on with the same environment.
  const url = [`U = a running service (default ${defaultUrl});`, 'WEIR_API_KEY = the key to send'];
  return {
    serve: {
      synopsis: 'weir serve [--role R]',
      lines: [
        'start the service (settings from the environment, see README);',
        'R = all (default), api (HTTP only) or worker (processing only)',
      ],
    },
    run: {
      synopsis: 'weir run FILE [--url U]',
      lines: [
        'run a pipeline file to its end, with progress per stage (bars on a terminal);',
        'embedded (in this process, on the data dir of WEIR_DATA_DIR) unless --url names a',
        'running service; exit code 0 succeeded, 1 partial, failed or empty, 2 invalid config',
      ],
    },
    ask: {
      synopsis: 'weir ask "QUESTION" [--url U] [--json]',
      lines: ['answer a question from what was indexed, with its citations;', ...url],
    },
    search: {
      synopsis: 'weir search "QUERY" [--mode M] [--limit N] [--url U] [--json]',
      lines: [
        'rank the indexed sources for a query; M = keyword, vector or rrf (default);',
        'N = results (1-100, default 10);',
        ...url,
      ],
    },
    validate: {
      synopsis: 'weir validate FILE...',
      lines: ['validate pipeline config files; exit code 1 when one has errors'],
    },
    adapters: { synopsis: 'weir adapters', lines: ['list the registered adapter types'] },
    eval: {
      synopsis: 'weir eval FILE [--modes M] [--chat] [--url U] [--json] [--limit N]',
      lines: [
        'run the questions of FILE (JSON Lines, docs/search-and-chat.md) against a running',
        'service; print hit@1/5/10, MRR@10, nDCG@10, latency and misses per mode;',
        'M = keyword,vector,rrf (default) and chat; --chat adds chat (its cited sources);',
        `N = segments asked per search (default ${evalDefaults.limit});`,
        ...url,
      ],
    },
    help: {
      synopsis: 'weir help [COMMAND]',
      lines: ["this help, or one command's (also: weir COMMAND --help)"],
    },
  };
}

function formatCommand(help: CommandHelp): string {
  return `  ${help.synopsis}\n${help.lines.map((line) => `      ${line}\n`).join('')}`;
}

/** All commands, or the one named. */
export function usage(defaultUrl: string, command?: string): string {
  const commands = commandHelp(defaultUrl);
  const one = command ? commands[command] : undefined;
  const listed = one ? [one] : Object.values(commands);
  return (
    `weir ${SERVICE_VERSION}: content pipelines and chat over what they indexed\n\nUsage:\n` +
    listed.map(formatCommand).join('') +
    (one ? '' : '  weir --version\n')
  );
}

export function isCommand(name: string): boolean {
  return Object.hasOwn(commandHelp(''), name);
}
