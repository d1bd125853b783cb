import { EventEmitter } from 'eventemitter3';

type Listener = (...args: never[]) => void;

/**
 * An eventemitter3 emitter whose listeners cannot break the emitter's owner: each listener is wrapped
 * at registration, so one that throws is reported through `listenerFailed` and the others still run,
 * and the code that emitted (a state machine in the middle of a transition) carries on.
 *
 * Only the public API of eventemitter3 is used: `on`/`once`/`off` (and their aliases) map a listener to
 * its wrapper, `listeners()` maps back, so callers see the functions they registered.
 */
export class GuardedEmitter<Events extends EventEmitter.ValidEventTypes> extends EventEmitter<Events> {
  /** Listener -> event -> wrapper: one wrapper per pair, so off() finds what on() registered. */
  readonly #wrappers = new WeakMap<Listener, Map<unknown, Listener>>();
  readonly #originals = new WeakMap<Listener, Listener>();

  /**
   * A listener of `event` threw `error`; the emission went on without it. Reported as `debug`
   * { kind: 'listener-error', detail: { event, error } } where a `debug` listener is there; without
   * one (or when one of those threw) rethrown in a microtask, as rxjs does, so an application bug is
   * never swallowed silently.
   */
  protected listenerFailed(event: string, error: unknown): void {
    if (event !== 'debug' && this.listenerCount('debug' as EventEmitter.EventNames<Events>) > 0) {
      (this.emit as unknown as (event: string, payload: unknown) => boolean)('debug', { kind: 'listener-error', detail: { event, error } });
      return;
    }
    queueMicrotask(() => {
      throw error;
    });
  }

  override on<T extends EventEmitter.EventNames<Events>>(event: T, fn: EventEmitter.EventListener<Events, T>, context?: unknown): this {
    return super.on(event, this.#wrap(event, fn), context);
  }

  override addListener<T extends EventEmitter.EventNames<Events>>(event: T, fn: EventEmitter.EventListener<Events, T>, context?: unknown): this {
    return super.addListener(event, this.#wrap(event, fn), context);
  }

  override once<T extends EventEmitter.EventNames<Events>>(event: T, fn: EventEmitter.EventListener<Events, T>, context?: unknown): this {
    return super.once(event, this.#wrap(event, fn), context);
  }

  override off<T extends EventEmitter.EventNames<Events>>(event: T, fn?: EventEmitter.EventListener<Events, T>, context?: unknown, once?: boolean): this {
    return super.off(event, this.#wrapped(event, fn), context, once);
  }

  override removeListener<T extends EventEmitter.EventNames<Events>>(event: T, fn?: EventEmitter.EventListener<Events, T>, context?: unknown, once?: boolean): this {
    return super.removeListener(event, this.#wrapped(event, fn), context, once);
  }

  override listeners<T extends EventEmitter.EventNames<Events>>(event: T): Array<EventEmitter.EventListener<Events, T>> {
    return super.listeners(event).map((w) => (this.#originals.get(w as Listener) ?? w) as EventEmitter.EventListener<Events, T>);
  }

  #wrap<F>(event: unknown, fn: F): F {
    const listener = fn as Listener;
    if (typeof listener !== 'function') return fn; // eventemitter3 reports the misuse itself
    let byEvent = this.#wrappers.get(listener);
    if (byEvent === undefined) {
      byEvent = new Map();
      this.#wrappers.set(listener, byEvent);
    }
    let wrapper = byEvent.get(event);
    if (wrapper === undefined) {
      const failed = (error: unknown): void => this.listenerFailed(String(event), error);
      wrapper = function guarded(this: unknown, ...args: never[]): void {
        try {
          listener.apply(this, args);
        } catch (error) {
          failed(error);
        }
      };
      byEvent.set(event, wrapper);
      this.#originals.set(wrapper, listener);
    }
    return wrapper as F;
  }

  /** The wrapper registered for `fn` (eventemitter3 itself removes `once` listeners by their wrapper). */
  #wrapped<F>(event: unknown, fn: F | undefined): F | undefined {
    if (fn === undefined) return undefined;
    return (this.#wrappers.get(fn as Listener)?.get(event) ?? fn) as F;
  }
}
