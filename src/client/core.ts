/**
 * A small event core in the re-frame style: events are vectors (`['log-in/submit', form]`),
 * event handlers are pure functions from the state and the event to a map of effects, and
 * effect handlers (registered by name) do the side effects. Built in: `db` (the new state),
 * `dispatch` and `dispatchN`.
 */

export type EventVector = [string, ...unknown[]];
export type Effects = Record<string, unknown>;
export type EventHandler<S> = (ctx: { state: S }, event: EventVector) => Effects | void;
export type EffectHandler<S> = (value: never, core: EventCore<S>) => void;

export class EventCore<S> {
  private readonly events = new Map<string, EventHandler<S>>();
  private readonly effects = new Map<string, EffectHandler<S>>();
  private readonly listeners = new Set<(state: S) => void>();
  private readonly queue: EventVector[] = [];
  private scheduled = false;

  constructor(private current: S) {
    this.regFx('db', (state: S) => this.setState(state));
    this.regFx('dispatch', (event: EventVector) => this.dispatch(event));
    this.regFx('dispatchN', (events: EventVector[]) => {
      for (const e of events) this.dispatch(e);
    });
  }

  get state(): S {
    return this.current;
  }

  /** Registers an event handler: `(ctx, event) => effects`. */
  regEvent(name: string, handler: EventHandler<S>): this {
    this.events.set(name, handler);
    return this;
  }

  /** Registers an effect handler, run with the value under its name in an effects map. */
  regFx<V>(name: string, handler: (value: V, core: EventCore<S>) => void): this {
    this.effects.set(name, handler as EffectHandler<S>);
    return this;
  }

  /** Queues an event; handlers run in order, after the current one finishes. */
  dispatch(event: EventVector): void {
    this.queue.push(event);
    if (!this.scheduled) {
      this.scheduled = true;
      queueMicrotask(() => this.drain());
    }
  }

  /** Runs an event now (tests, start-up). */
  dispatchSync(event: EventVector): void {
    const handler = this.events.get(event[0]);
    if (!handler) {
      console.warn(`No handler for event ${event[0]}`);
      return;
    }
    const effects = handler({ state: this.current }, event) ?? {};
    // `db` first, so the other effects see the new state
    if ('db' in effects) this.runFx('db', effects.db);
    for (const [name, value] of Object.entries(effects)) if (name !== 'db' && value !== undefined) this.runFx(name, value);
  }

  subscribe(listener: (state: S) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private runFx(name: string, value: unknown): void {
    const fx = this.effects.get(name);
    if (!fx) throw new Error(`No effect handler for ${name}`);
    (fx as (v: unknown, core: EventCore<S>) => void)(value, this);
  }

  private setState(state: S): void {
    if (state === this.current) return;
    this.current = state;
    for (const l of this.listeners) l(state);
  }

  private drain(): void {
    this.scheduled = false;
    while (this.queue.length) this.dispatchSync(this.queue.shift()!);
  }
}
