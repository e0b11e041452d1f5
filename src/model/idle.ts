// An idle timeout for streamed replies: a server that sends headers (or message_start) and then
// nothing would otherwise hold lethe silent for the SDK's 10-minute request timeout, times its
// retries. No byte for `ms` → the request is aborted and reported as a retryable network error.

export class IdleWatch {
  readonly signal: AbortSignal;
  /** The timeout fired (as opposed to the caller aborting). */
  fired = false;
  private readonly ctrl = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private readonly onParentAbort = () => this.ctrl.abort();

  constructor(
    private readonly parent: AbortSignal | undefined,
    readonly ms: number,
  ) {
    this.signal = this.ctrl.signal;
    if (parent?.aborted) this.ctrl.abort();
    else parent?.addEventListener("abort", this.onParentAbort, { once: true });
    this.kick();
  }

  /** Something arrived: the countdown starts again. */
  kick(): void {
    if (this.timer) clearTimeout(this.timer);
    if (!(this.ms > 0) || this.ctrl.signal.aborted) return;
    this.timer = setTimeout(() => {
      this.fired = true;
      this.ctrl.abort();
    }, this.ms);
    this.timer.unref?.();
  }

  done(): void {
    if (this.timer) clearTimeout(this.timer);
    this.parent?.removeEventListener("abort", this.onParentAbort);
  }

  /** The message of the retryable error when the timeout fired. */
  message(provider: string): string {
    const s = this.ms < 10_000 ? (this.ms / 1000).toFixed(1) : String(Math.round(this.ms / 1000));
    return `${provider}: no data from the server for ${s} s (stream idle timeout)`;
  }
}

/** Default idle timeout: generous for slow local servers, far below the SDKs' 10 minutes. */
export const DEFAULT_IDLE_TIMEOUT_MS = 120_000;
