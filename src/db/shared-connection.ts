/**
 * One shared connection of the pipelined dialect (pipelined-dialect.ts): pg in pipeline mode,
 * the statements of concurrent requests written in batches (corked until the tick ends), each
 * with its own Sync; opened by the first statement that needs it, replaced when it drops, and
 * closed by the driver's watchdog when it stops answering.
 */
import type { QueryResult } from 'kysely';
import pg from 'pg';
import { planChanged, statementName, withCachedRowShape } from './prepared-client.js';

export interface SharedConnectionOptions {
  /** settings of the shared connections (pipeline mode is switched on here) */
  client: pg.ClientConfig;
  /** send parameterised statements as named prepared statements */
  preparedStatements: boolean;
  /** a shared connection with statements outstanding and no answer for this long is closed */
  stallTimeoutMs: number;
  /** a shared connection opened (with its number) or lost */
  onConnect?(client: pg.Client, slot: number): void;
  onConnectionError?(err: Error, slot: number): void;
}

export type Rows = Record<string, unknown>;
export type Callback = (err: Error | null, result: pg.QueryResult<Rows>) => void;

export function toKysely<R>(result: pg.QueryResult<Rows>): QueryResult<R> {
  const { command } = result;
  const affected = command === 'INSERT' || command === 'UPDATE' || command === 'DELETE' || command === 'MERGE';
  return { rows: (result.rows ?? []) as R[], numAffectedRows: affected ? BigInt(result.rowCount ?? 0) : undefined };
}

/** statements sent on one client and not yet answered, and when the last answer (or first send) was seen */
interface Progress {
  outstanding: number;
  lastProgress: number;
}

/** One shared, pipelined connection; replaced by a new one when it drops. */
export class SharedConnection {
  private client: pg.Client | undefined;
  private ready = false;
  private opening: Promise<pg.Client> | undefined;
  /** per client, so the late failures of a lost client do not count against its replacement */
  private progress: Progress = { outstanding: 0, lastProgress: 0 };

  constructor(
    private readonly options: SharedConnectionOptions,
    private readonly slot: number,
  ) {}

  send(text: string, values: readonly unknown[], callback: Callback): void {
    if (this.ready) this.write(this.client!, text, values, callback);
    else
      this.open().then(
        (client) => this.write(client, text, values, callback),
        (err: Error) => callback(err, undefined as never),
      );
  }

  private write(client: pg.Client, text: string, values: readonly unknown[], callback: Callback): void {
    const progress = this.progress;
    if (progress.outstanding++ === 0) progress.lastProgress = Date.now();
    this.cork(client);
    const done: Callback = (err, result) => {
      progress.outstanding--;
      progress.lastProgress = Date.now();
      callback(err, result);
    };
    const name = this.options.preparedStatements && values.length > 0 ? statementName(text) : undefined;
    client.query(
      this.query(
        text,
        values,
        name,
        name === undefined
          ? done
          : (err, result) => {
              // a table changed under a prepared statement (another instance's migration): prepare anew
              if (err && planChanged(err)) client.query(this.query(text, values, statementName(text), done));
              else done(err, result);
            },
      ),
    );
  }

  /**
   * A pg Query made from the text, not from a config object: pg copies a config object through
   * its property descriptors (~2 µs a statement, docs/performance.md).
   */
  private query(text: string, values: readonly unknown[], name: string | undefined, callback: Callback): pg.Query {
    const query = new pg.Query(text, values as unknown[], callback as never);
    if (name === undefined) return query;
    (query as unknown as { name: string }).name = name;
    return withCachedRowShape(query, name);
  }

  /**
   * pg writes each statement with a `writev` of its own (a system call, ~10 µs here). Held
   * corked until the event loop has run every callback of this turn, the statements of all the
   * requests that arrived together leave in one `writev`.
   */
  private corked: { uncork(): void } | undefined;
  private readonly uncork = () => {
    const stream = this.corked;
    this.corked = undefined;
    stream?.uncork();
  };

  private cork(client: pg.Client): void {
    if (this.corked) return;
    const stream = (client as unknown as { connection: { stream: { cork(): void; uncork(): void } } }).connection.stream;
    stream.cork();
    this.corked = stream;
    setImmediate(this.uncork);
  }

  private open(): Promise<pg.Client> {
    if (this.opening !== undefined) return this.opening;
    const client = new pg.Client({ ...this.options.client, pipeline: true });
    const lost = (err: Error) => {
      if (this.client !== client) return;
      const wasOpen = this.ready;
      this.client = undefined;
      this.ready = false;
      this.opening = undefined;
      this.progress = { outstanding: 0, lastProgress: 0 };
      // an attempt that never connected is the statement's failure, told by whoever ran it (the
      // start-up wait says it once, a request answers 503): only losing an open one is news here
      if (wasOpen) this.options.onConnectionError?.(err, this.slot);
    };
    // an unheard 'error' would crash the process; pg fails the statements on the connection itself
    client.on('error', lost);
    client.on('end', () => lost(new Error('Connection terminated')));
    this.client = client;
    this.opening = client.connect().then(
      () => {
        if (this.client === client) {
          this.ready = true;
          this.options.onConnect?.(client, this.slot);
        }
        return client;
      },
      (err: Error) => {
        lost(err);
        client.end().catch(() => undefined);
        throw err;
      },
    );
    return this.opening;
  }

  /** closes the connection when statements are outstanding and nothing came back for too long */
  checkStalled(now: number): void {
    const { outstanding, lastProgress } = this.progress;
    if (this.ready && outstanding > 0 && now - lastProgress > this.options.stallTimeoutMs) {
      const client = this.client!;
      this.options.onConnectionError?.(new Error(`No answer for ${this.options.stallTimeoutMs} ms`), this.slot);
      (client as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
    }
  }

  async close(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.ready = false;
    this.opening = undefined;
    // pg waits for the statements already written, then says goodbye
    if (client) await client.end().catch(() => undefined);
  }
}
