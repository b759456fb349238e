/**
 * A PostgreSQL server of the test's own, in a temporary directory on a free port of 127.0.0.1,
 * for tests that stop and restart the database (never the machine's shared one). initdb and the
 * server refuse to run as root, so as root they run as the `postgres` user.
 */
import { execFile } from 'node:child_process';
import { existsSync, globSync } from 'node:fs';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from './net.js';

const run = promisify(execFile);

/** the directory of PostgreSQL's server programs: on PATH, else Debian's versioned directory */
function binDir(): string {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    if (dir && existsSync(join(dir, 'pg_ctl')) && existsSync(join(dir, 'initdb'))) return dir;
  }
  const debian = globSync('/usr/lib/postgresql/*/bin/pg_ctl').sort().at(-1);
  if (!debian) throw new Error("PostgreSQL's server programs (initdb, pg_ctl) are not installed");
  return debian.slice(0, -'/pg_ctl'.length);
}

export class PrivatePostgres {
  private constructor(
    readonly dir: string,
    readonly port: number,
    private readonly bin: string,
    private readonly asPostgres: boolean,
  ) {}

  static async create(): Promise<PrivatePostgres> {
    const dir = await mkdtemp(join(tmpdir(), 'saas-pg-'));
    const asPostgres = userInfo().uid === 0;
    if (asPostgres) {
      const { stdout } = await run('id', ['-u', 'postgres']);
      const { stdout: gid } = await run('id', ['-g', 'postgres']);
      await chown(dir, Number(stdout.trim()), Number(gid.trim()));
    }
    const server = new PrivatePostgres(dir, await freePort(), binDir(), asPostgres);
    await server.pg('initdb', ['-D', join(dir, 'data'), '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--no-sync']);
    return server;
  }

  /** postgres://postgres@127.0.0.1:port/<database> */
  url(database = 'postgres'): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  async start(): Promise<void> {
    await this.pg('pg_ctl', [...this.serverArgs(), 'start']);
  }

  /** `fast`: open connections are ended (as a restart or a failover does) */
  async stop(): Promise<void> {
    await this.pg('pg_ctl', ['-D', join(this.dir, 'data'), '-w', '-t', '60', '-m', 'fast', 'stop']);
  }

  async restart(): Promise<void> {
    await this.pg('pg_ctl', [...this.serverArgs(), '-m', 'fast', 'restart']);
  }

  /**
   * What starting a server takes: its directory, port and settings; -l sends its output to a log
   * file, or the new server would hold pg_ctl's output open and the caller would wait for it.
   */
  private serverArgs(): string[] {
    const settings = `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off`;
    return ['-D', join(this.dir, 'data'), '-l', join(this.dir, 'server.log'), '-w', '-t', '60', '-o', settings];
  }

  /** Makes a database; the server migrates it when it starts. */
  async createDatabase(name: string): Promise<string> {
    const client = new pg.Client({ connectionString: this.url() });
    await client.connect();
    try {
      await client.query(`create database ${name}`);
    } finally {
      await client.end();
    }
    return this.url(name);
  }

  async dispose(): Promise<void> {
    await this.stop().catch(() => undefined);
    await rm(this.dir, { recursive: true, force: true });
  }

  private async pg(program: string, args: string[]): Promise<void> {
    const path = join(this.bin, program);
    if (this.asPostgres) await run('runuser', ['-u', 'postgres', '--', path, ...args], { cwd: this.dir });
    else await run(path, args, { cwd: this.dir });
  }
}
