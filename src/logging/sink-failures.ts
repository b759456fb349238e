/**
 * What a log sink does when it fails (docs/deployment.md, "When a dependency fails"): the entries
 * it cannot take are dropped and counted, never queued without bound nor retried in a loop. The
 * failure is said once on the other sinks when it starts, then at most once a minute with the
 * number lost while it lasts, and once more when the sink writes again: never a line per lost
 * entry.
 */

export type SinkName = 'console' | 'file';

/** How a sink's failure reaches the other sinks (the backend sets it: src/logging/logger.ts). */
export type SinkNotice = (level: 'warn' | 'info', id: string, msg: string, data: Record<string, unknown>) => void;

/** how often a failure that lasts is said again, with what it cost meanwhile */
export const REPEAT_NOTICE_MS = 60_000;

export class SinkFailures {
  /** entries this sink dropped since the process started (`saas_log_entries_dropped_total{sink}`) */
  total = 0;
  notify: SinkNotice = () => undefined;
  private failingSince: number | undefined;
  private lostInOutage = 0;
  private lostSinceNotice = 0;
  private lastNoticeAt = 0;

  constructor(
    readonly sink: SinkName,
    private readonly now: () => number = Date.now,
  ) {}

  get failing(): boolean {
    return this.failingSince !== undefined;
  }

  /** `lost` entries were not written, because of `reason` (an errno code, or what happened). */
  failed(reason: string, lost: number): void {
    this.total += lost;
    this.lostInOutage += lost;
    this.lostSinceNotice += lost;
    const now = this.now();
    if (this.failingSince === undefined) {
      this.failingSince = now;
      this.lastNoticeAt = now;
      this.notify('warn', 'log/sink-failed', `The ${this.sink} log sink fails (${reason}): its entries are dropped and counted until it takes them again`, {
        sink: this.sink,
        reason,
        lost: this.lostSinceNotice,
      });
      this.lostSinceNotice = 0;
    } else if (now - this.lastNoticeAt >= REPEAT_NOTICE_MS) {
      this.lastNoticeAt = now;
      this.notify(
        'warn',
        'log/sink-still-failing',
        `The ${this.sink} log sink still fails (${reason}): ${this.lostSinceNotice} entries dropped since the last notice`,
        { sink: this.sink, reason, lost: this.lostSinceNotice },
      );
      this.lostSinceNotice = 0;
    }
  }

  /** The sink took a write again: said once, with what the outage cost. */
  recovered(): void {
    if (this.failingSince === undefined) return;
    const seconds = Math.round((this.now() - this.failingSince) / 1000);
    const lost = this.lostInOutage;
    this.failingSince = undefined;
    this.lostInOutage = 0;
    this.lostSinceNotice = 0;
    this.notify('info', 'log/sink-recovered', `The ${this.sink} log sink writes again after ${seconds} s; ${lost} entries were dropped`, {
      sink: this.sink,
      lost,
      seconds,
    });
  }
}

/** the number of lines in `text` (each ends with a newline) */
export function countLines(text: string | Buffer): number {
  let n = 0;
  if (typeof text === 'string') {
    for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++;
  } else {
    for (let i = text.indexOf(10); i !== -1; i = text.indexOf(10, i + 1)) n++;
  }
  return Math.max(n, 1);
}
