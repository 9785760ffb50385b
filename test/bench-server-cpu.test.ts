import { describe, expect, it } from 'vitest';
import {
  backendDatabase,
  describeRunResources,
  machineBusySeconds,
  processesNamed,
} from '../bench/lib/server-cpu.js';

// bench/lib/server-cpu.ts: whose CPU a server-path bench run used (PostgreSQL, the broker, the
// machine), read from /proc (the benches that use it run on Linux only).

describe('server CPU of a bench run', () => {
  it("tells a backend's database from its title, and the server's own processes from backends", () => {
    expect(backendDatabase('postgres: 15/main: postgres bench_b_1 127.0.0.1(53412) idle\0\0')).toBe(
      'bench_b_1',
    );
    expect(backendDatabase('postgres: weir weir_db [local] idle in transaction')).toBe('weir_db');
    expect(backendDatabase('postgres: 15/main: checkpointer ')).toBeUndefined();
    expect(backendDatabase('postgres: logical replication launcher')).toBeUndefined();
    expect(
      backendDatabase('/usr/lib/postgresql/15/bin/postgres -D /var/lib/postgresql/15/main'),
    ).toBeUndefined();
  });

  it("finds processes by command and counts this one's CPU as it spends it", () => {
    const mine = () => processesNamed('node').find((stat) => stat.pid === process.pid);
    const before = mine();
    expect(before).toBeDefined();
    // Spend 0.2 s of CPU (as the process counts it itself), however loaded the machine is.
    const start = process.cpuUsage();
    const spent = () => {
      const used = process.cpuUsage(start);
      return (used.user + used.system) / 1e6;
    };
    while (spent() < 0.2);
    // /proc counts in ticks of 10 ms, and other threads of this process may add to it.
    expect((mine()?.own ?? 0) - (before?.own ?? 0)).toBeGreaterThanOrEqual(0.18);
    expect(machineBusySeconds()).toBeGreaterThan(0);
  });

  it('sets every part against the cores times the wall, and names what other programs took', () => {
    const text = describeRunResources({
      seconds: 10,
      cpu: 8,
      mainThreadCpu: 5,
      servers: { postgres: 4, postgresDatabase: 3.5, broker: 3, machine: 19 },
      pageServer: 1,
      cores: 2,
    });
    expect(text).toContain('(10.00 s on 2 cores = 20.0 core-s)');
    expect(text).toContain('main thread 5.00 s, busy 50% of the wall');
    expect(text).toContain("this database's backends 3.50 s");
    expect(text).toContain('together 16.00 s = 80% of the cores');
    expect(text).toContain('the machine was busy 19.00 s (95%), other programs 3.00 s');
  });
});
