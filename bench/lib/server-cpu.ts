/**
 * CPU seconds of the local server processes a server-path bench drives, read from /proc
 * (Linux; NaN elsewhere), so a bench can say whose CPU a run used, not only its own:
 * - PostgreSQL: every process whose command is `postgres`, plus what the postmaster's exited
 *   children used (its cutime and cstime: a backend that ended during the run still counts).
 *   A backend's title names its database, so the share of one database's backends is told
 *   apart from the rest (background writers and other databases' sessions, e.g. another
 *   bench's on the same server).
 * - The broker: BENCH_BROKER_PID, or every `beam.smp` (RabbitMQ). Its CPU includes every
 *   client's traffic, not only this bench's.
 * - The machine: busy core-seconds from /proc/stat, so a run can be set against what the
 *   machine had (and what other programs took).
 */
import { readdirSync, readFileSync } from 'node:fs';

/** USER_HZ: the kernel's clock ticks per second as /proc reports them (100 on Linux). */
const TICKS_PER_SECOND = 100;

interface ProcessStat {
  pid: number;
  command: string;
  parent: number;
  /** utime + stime, seconds. */
  own: number;
  /** cutime + cstime: children that ended and were waited for, seconds. */
  children: number;
}

function readStat(pid: number): ProcessStat | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const command = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    // Fields after the command name (which may hold spaces): the state is the 3rd field.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = (index: number) => Number(fields[index]) / TICKS_PER_SECOND;
    return {
      pid,
      command,
      parent: Number(fields[1]),
      own: ticks(11) + ticks(12),
      children: ticks(13) + ticks(14),
    };
  } catch {
    return undefined; // ended meanwhile, or no /proc
  }
}

/** The processes whose command (/proc/<pid>/comm, as `pgrep -x`) is `command`. */
export function processesNamed(command: string): ProcessStat[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const found: ProcessStat[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readStat(Number(entry));
    if (stat?.command === command) found.push(stat);
  }
  return found;
}

/** CPU seconds the local broker has used: BENCH_BROKER_PID, else every `beam.smp`; NaN if none. */
export function brokerCpuSeconds(): number {
  const pid = process.env.BENCH_BROKER_PID;
  const processes = pid
    ? [readStat(Number(pid))].filter((stat) => stat !== undefined)
    : processesNamed('beam.smp');
  if (processes.length === 0) return Number.NaN;
  return processes.reduce((sum, stat) => sum + stat.own, 0);
}

/**
 * The database a backend's title (its /proc cmdline) names: `postgres: [cluster: ]user database
 * host(port) state`, or `[local]` for a socket; undefined for the server's own processes.
 */
export function backendDatabase(title: string): string | undefined {
  const words = title
    .replaceAll('\0', ' ')
    .trim()
    .replace(/^postgres: (\S+: )?/, '')
    .split(' ');
  return words.length >= 3 && /\(\d+\)$|^\[local\]$/.test(words[2] ?? '') ? words[1] : undefined;
}

function titleOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return ''; // ended meanwhile
  }
}

export interface PostgresCpu {
  /** Every postgres process, and the postmaster's exited children; NaN if no server runs here. */
  total: number;
  /** Per database, its live backends' own CPU. */
  byDatabase: Map<string, number>;
}

export function postgresCpuSeconds(): PostgresCpu {
  const processes = processesNamed('postgres');
  const byDatabase = new Map<string, number>();
  if (processes.length === 0) return { total: Number.NaN, byDatabase };
  const pids = new Set(processes.map((stat) => stat.pid));
  let total = 0;
  for (const stat of processes) {
    total += stat.own;
    // The postmaster (its parent is not a postgres process) holds its ended backends' CPU.
    if (!pids.has(stat.parent)) total += stat.children;
    const database = backendDatabase(titleOf(stat.pid));
    if (database) byDatabase.set(database, (byDatabase.get(database) ?? 0) + stat.own);
  }
  return { total, byDatabase };
}

/** Busy core-seconds of the whole machine so far (/proc/stat: all but idle and iowait). */
export function machineBusySeconds(): number {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
    const ticks = line.split(/\s+/).slice(1, 9).map(Number);
    const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0);
    return (ticks.reduce((sum, value) => sum + value, 0) - idle) / TICKS_PER_SECOND;
  } catch {
    return Number.NaN;
  }
}

export interface ServerCpu {
  postgres: PostgresCpu;
  broker: number;
  machine: number;
}

export function serverCpu(): ServerCpu {
  return { postgres: postgresCpuSeconds(), broker: brokerCpuSeconds(), machine: machineBusySeconds() };
}

export interface ServerCpuSpent {
  postgres: number;
  /** The backends of `database` alone (NaN without a database name). */
  postgresDatabase: number;
  broker: number;
  machine: number;
}

export function serverCpuSince(before: ServerCpu, database?: string, after = serverCpu()): ServerCpuSpent {
  const ofDatabase = (reading: ServerCpu) =>
    database ? (reading.postgres.byDatabase.get(database) ?? 0) : Number.NaN;
  return {
    postgres: after.postgres.total - before.postgres.total,
    postgresDatabase: ofDatabase(after) - ofDatabase(before),
    broker: after.broker - before.broker,
    machine: after.machine - before.machine,
  };
}

/**
 * Which resource bounded a server-path run: every part's CPU over the run against what the
 * machine's cores offered in its wall time, the main thread's share of the wall (a
 * single-threaded service's ceiling), and what the machine spent beyond these parts.
 */
export function describeRunResources(run: {
  seconds: number;
  /** The bench process (the service), every thread. */
  cpu: number;
  mainThreadCpu: number;
  servers: ServerCpuSpent;
  /** The page server's CPU (it serves only during the run). */
  pageServer: number;
  cores: number;
}): string {
  const { seconds, servers, cores } = run;
  const offered = cores * seconds;
  const parts = run.cpu + servers.postgres + servers.broker + run.pageServer;
  const others = servers.machine - parts;
  const percent = (value: number) => `${Math.round((100 * value) / offered)}%`;
  const s = (value: number) => (Number.isNaN(value) ? 'n/a' : `${value.toFixed(2)} s`);
  return [
    `CPU over the run (${seconds.toFixed(2)} s on ${cores} cores = ${offered.toFixed(1)} core-s):`,
    `  service ${s(run.cpu)} (main thread ${s(run.mainThreadCpu)}, busy ${Math.round((100 * run.mainThreadCpu) / seconds)}% of the wall)`,
    `  PostgreSQL ${s(servers.postgres)} (this database's backends ${s(servers.postgresDatabase)}; the rest: background processes, ended backends, other databases)`,
    `  RabbitMQ ${s(servers.broker)} (beam.smp: every client's traffic, not only this run's)`,
    `  page server ${s(run.pageServer)} (over the bench; it serves only during the run)`,
    `  together ${s(parts)} = ${percent(parts)} of the cores; the machine was busy ${s(servers.machine)} (${percent(servers.machine)}), other programs ${s(others)}`,
  ].join('\n');
}
