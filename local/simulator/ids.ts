/**
 * Deterministic randomness. Every id and every random choice of the simulator comes from here, so the
 * same seed and the same calls give the same data. Each kind of record draws from its own stream, so
 * adding (say) a webhook does not shift the ids of the applications.
 */

/** xmur3: turns a string into a sequence of 32-bit seeds. */
function xmur3(str: string): () => number {
  let h = 1779033703 ^ str.length;
  for (let i = 0; i < str.length; i++) {
    h = Math.imul(h ^ str.charCodeAt(i), 3432918353);
    h = (h << 13) | (h >>> 19);
  }
  return () => {
    h = Math.imul(h ^ (h >>> 16), 2246822507);
    h = Math.imul(h ^ (h >>> 13), 3266489909);
    return (h ^= h >>> 16) >>> 0;
  };
}

/** A small, fast PRNG (sfc32) with helpers. */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: string) {
    const next = xmur3(seed);
    this.a = next();
    this.b = next();
    this.c = next();
    this.d = next();
    for (let i = 0; i < 12; i++) this.uint32(); // warm up: the first outputs of sfc32 are weak
  }

  uint32(): number {
    this.a >>>= 0; this.b >>>= 0; this.c >>>= 0; this.d >>>= 0;
    let t = (this.a + this.b) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.d = (this.d + 1) | 0;
    t = (t + this.d) | 0;
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    return this.uint32() / 4294967296;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error("pick from an empty list");
    return items[Math.floor(this.next() * items.length)]!;
  }

  hex(length: number): string {
    let out = "";
    while (out.length < length) out += this.uint32().toString(16).padStart(8, "0");
    return out.slice(0, length);
  }

  /** An RFC 4122 version 4 uuid. */
  uuid(): string {
    const h = this.hex(32).split("");
    h[12] = "4";
    h[16] = "89ab"[parseInt(h[16]!, 16) & 3]!;
    const s = h.join("");
    return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20)}`;
  }

  /** Fisher–Yates, returning a new array. */
  shuffle<T>(items: readonly T[]): T[] {
    const out = items.slice();
    for (let i = out.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      [out[i], out[j]] = [out[j]!, out[i]!];
    }
    return out;
  }

  /** Exponentially distributed wait with the given mean (Poisson arrivals). */
  exponential(mean: number): number {
    return -Math.log(1 - this.next()) * mean;
  }
}

/** Named streams of one seed: `stream("application")` always yields the same sequence for a seed. */
export class RandomSource {
  private readonly streams = new Map<string, Rng>();

  constructor(readonly seed: number) {}

  stream(name: string): Rng {
    let rng = this.streams.get(name);
    if (!rng) {
      rng = new Rng(`lookout-simulator:${this.seed}:${name}`);
      this.streams.set(name, rng);
    }
    return rng;
  }

  uuid(kind: string): string {
    return this.stream(`id:${kind}`).uuid();
  }
}
