// Peak memory of the bench process: process.memoryUsage() sampled on a timer (and on demand
// around synchronous work the timer cannot interrupt), plus the kernel's own RSS high-water
// mark (getrusage maxrss), which also catches peaks between samples.

export interface MemoryPeak {
  /** Highest sampled resident set size, bytes. */
  rss: number;
  /** Highest sampled V8 heapUsed, bytes. */
  heapUsed: number;
  samples: number;
}

interface Window {
  rss: number;
  heapUsed: number;
  samples: number;
}

export class MemorySampler {
  private overall: Window = { rss: 0, heapUsed: 0, samples: 0 };
  private window: Window = { rss: 0, heapUsed: 0, samples: 0 };
  private timer: NodeJS.Timeout | null = null;

  start(intervalMs = 20): void {
    this.sample();
    this.timer ??= setInterval(() => this.sample(), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.sample();
  }

  sample(): void {
    const m = process.memoryUsage();
    for (const w of [this.overall, this.window]) {
      w.samples++;
      if (m.rss > w.rss) w.rss = m.rss;
      if (m.heapUsed > w.heapUsed) w.heapUsed = m.heapUsed;
    }
  }

  /** Starts a new window (one per section); the run-wide peak is kept. */
  startWindow(): void {
    this.window = { rss: 0, heapUsed: 0, samples: 0 };
    this.sample();
  }

  /** Peaks since the window started. */
  windowPeak(): MemoryPeak {
    this.sample();
    return { ...this.window };
  }

  /** Peaks over the whole run. */
  peak(): MemoryPeak {
    this.sample();
    return { ...this.overall };
  }

  /** getrusage(2) ru_maxrss in bytes: the kernel's RSS high-water mark for this process. */
  static maxRss(): number {
    return process.resourceUsage().maxRSS * 1024;
  }
}
