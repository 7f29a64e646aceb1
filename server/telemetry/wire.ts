/**
 * A direct protobuf wire reader for ExportMetricsServiceRequest that visits
 * only what the intake reads: metric names, Sum and Gauge number points,
 * their attributes, times and values. Everything else (resources, scopes,
 * histograms, exemplars, metrics the server does not read) is skipped by
 * length without being decoded. The generated schema's `fromBinary` builds
 * every message and costs several times more per request (BENCHMARKS.md);
 * field numbers here are those of opentelemetry/proto/metrics/v1/metrics.proto
 * and collector/metrics/v1/metrics_service.proto.
 *
 * Malformed input (a truncated field, a length past the end, an unknown wire
 * type) throws WireError.
 */

export class WireError extends Error {}

/** A point's attributes with string values (non-string scalars stringified; arrays, maps and bytes left out). */
export class Attrs {
  keys: string[] = [];
  values: string[] = [];
  size = 0;

  clear(): void {
    this.size = 0;
  }

  push(key: string, value: string): void {
    this.keys[this.size] = key;
    this.values[this.size] = value;
    this.size++;
  }

  get(key: string): string | undefined {
    for (let i = 0; i < this.size; i++) if (this.keys[i] === key) return this.values[i];
    return undefined;
  }
}

export interface PointVisitor {
  /** Whether points of this metric are wanted; false skips its data unread. */
  wants(name: string): boolean;
  /**
   * One number point of the last wanted metric. `temporality` is the Sum's
   * aggregation temporality (0 unspecified, 1 delta, 2 cumulative) or -1 for
   * a Gauge; times are ms since the epoch, 0 when unset. `attrKey` identifies
   * the point's attributes (their encoded bytes); `attrs()` decodes them, for
   * when the key is new.
   */
  point(temporality: number, attrKey: string, attrs: () => Attrs, value: number, flags: number, timeMs: number, startMs: number): void;
}

const TWO32 = 4294967296;

class Reader {
  pos = 0;
  private readonly view: DataView;

  constructor(readonly buf: Buffer) {
    this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  }

  varint(): number {
    let result = 0;
    let shift = 0;
    for (;;) {
      if (this.pos >= this.buf.length) throw new WireError("truncated varint");
      const b = this.buf[this.pos++]!;
      if (shift < 28) result |= (b & 0x7f) << shift;
      else result += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return shift < 28 ? result >>> 0 : result;
      shift += 7;
      if (shift > 63) throw new WireError("varint longer than 10 bytes");
    }
  }

  /** int64 varint as a (possibly negative) number. */
  int64(): number {
    const start = this.pos;
    const v = this.varint();
    // 10-byte varints are negative two's complement numbers.
    return this.pos - start === 10 ? v - 2 ** 64 : v;
  }

  /** End offset of a length-delimited field that starts here. */
  end(): number {
    const len = this.varint();
    const end = this.pos + len;
    if (end > this.buf.length) throw new WireError("length-delimited field runs past the end");
    return end;
  }

  fixed64Ms(): number {
    this.need(8);
    const lo = this.view.getUint32(this.pos, true);
    const hi = this.view.getUint32(this.pos + 4, true);
    this.pos += 8;
    return (hi * TWO32 + lo) / 1e6;
  }

  sfixed64(): number {
    this.need(8);
    const lo = this.view.getUint32(this.pos, true);
    const hi = this.view.getInt32(this.pos + 4, true);
    this.pos += 8;
    return hi * TWO32 + lo;
  }

  double(): number {
    this.need(8);
    const v = this.view.getFloat64(this.pos, true);
    this.pos += 8;
    return v;
  }

  string(end: number): string {
    const s = this.buf.toString("utf8", this.pos, end);
    this.pos = end;
    return s;
  }

  skip(wireType: number): void {
    switch (wireType) {
      case 0:
        this.varint();
        return;
      case 1:
        this.need(8);
        this.pos += 8;
        return;
      case 2:
        this.pos = this.end();
        return;
      case 5:
        this.need(4);
        this.pos += 4;
        return;
      default:
        throw new WireError(`unsupported wire type ${wireType}`);
    }
  }

  private need(n: number): void {
    if (this.pos + n > this.buf.length) throw new WireError("truncated fixed-size field");
  }
}

/** Walks an ExportMetricsServiceRequest. */
export function visitRequest(bytes: Uint8Array, visitor: PointVisitor): void {
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const r = new Reader(buf);
  // request.resource_metrics = 1 → ResourceMetrics.scope_metrics = 2 → ScopeMetrics.metrics = 2
  forEach(r, buf.length, 1, (rmEnd) => forEach(r, rmEnd, 2, (smEnd) => forEach(r, smEnd, 2, (mEnd) => metric(r, mEnd, visitor))));
}

/** Calls `fn(end)` for every length-delimited occurrence of `field` before `end`, skipping other fields. */
function forEach(r: Reader, end: number, field: number, fn: (end: number) => void): void {
  while (r.pos < end) {
    const tag = r.varint();
    if (tag >>> 3 === field && (tag & 7) === 2) {
      const e = r.end();
      fn(e);
      r.pos = e;
    } else {
      r.skip(tag & 7);
    }
  }
  if (r.pos !== end) throw new WireError("field runs past its message");
}

function metric(r: Reader, end: number, visitor: PointVisitor): void {
  let name = "";
  let dataField = 0;
  let dataStart = 0;
  let dataEnd = 0;
  while (r.pos < end) {
    const tag = r.varint();
    const field = tag >>> 3;
    if (field === 1 && (tag & 7) === 2) {
      name = r.string(r.end());
    } else if ((field === 5 || field === 7) && (tag & 7) === 2) {
      dataField = field;
      dataEnd = r.end();
      dataStart = r.pos;
      r.pos = dataEnd;
    } else {
      r.skip(tag & 7);
    }
  }
  if (r.pos !== end) throw new WireError("field runs past its message");
  if (dataField === 0 || !visitor.wants(name)) return;
  let temporality = -1;
  if (dataField === 7) {
    // Sum.aggregation_temporality = 2 may follow its points: find it first.
    temporality = 0;
    r.pos = dataStart;
    while (r.pos < dataEnd) {
      const tag = r.varint();
      if (tag === ((2 << 3) | 0)) temporality = r.varint();
      else r.skip(tag & 7);
    }
  }
  r.pos = dataStart;
  // Gauge.data_points = 1, Sum.data_points = 1
  forEach(r, dataEnd, 1, (pEnd) => numberPoint(r, pEnd, temporality, visitor));
}

function numberPoint(r: Reader, end: number, temporality: number, visitor: PointVisitor): void {
  let value = NaN;
  let flags = 0;
  let time = 0;
  let start = 0;
  let attrKey = "";
  const ranges: number[] = [];
  while (r.pos < end) {
    const tag = r.varint();
    switch (tag) {
      case (7 << 3) | 2: {
        const from = r.pos;
        const e = r.end();
        ranges.push(from, e);
        r.pos = e;
        break;
      }
      case (2 << 3) | 1:
        start = r.fixed64Ms();
        break;
      case (3 << 3) | 1:
        time = r.fixed64Ms();
        break;
      case (4 << 3) | 1:
        value = r.double();
        break;
      case (6 << 3) | 1:
        value = r.sfixed64();
        break;
      case (8 << 3) | 0:
        flags = r.varint();
        break;
      default:
        r.skip(tag & 7);
    }
  }
  if (r.pos !== end) throw new WireError("field runs past its message");
  // The attributes' bytes name the series: one string per point instead of one per key and value.
  for (let i = 0; i < ranges.length; i += 2) attrKey += r.buf.toString("latin1", ranges[i]!, ranges[i + 1]!);
  let decoded: Attrs | null = null;
  const decode = (): Attrs => {
    if (decoded === null) {
      decoded = new Attrs();
      const at = r.pos;
      for (let i = 0; i < ranges.length; i += 2) {
        r.pos = ranges[i]!;
        const e = r.end();
        keyValue(r, e, decoded);
      }
      r.pos = at;
    }
    return decoded;
  };
  visitor.point(temporality, attrKey, decode, value, flags, time, start);
}

function keyValue(r: Reader, end: number, attrs: Attrs): void {
  let key = "";
  let value: string | null = null;
  while (r.pos < end) {
    const tag = r.varint();
    if (tag === ((1 << 3) | 2)) {
      key = r.string(r.end());
    } else if (tag === ((2 << 3) | 2)) {
      const e = r.end();
      value = anyValue(r, e);
      r.pos = e;
    } else {
      r.skip(tag & 7);
    }
  }
  if (value !== null) attrs.push(key, value);
}

function anyValue(r: Reader, end: number): string | null {
  let value: string | null = null;
  while (r.pos < end) {
    const tag = r.varint();
    switch (tag) {
      case (1 << 3) | 2:
        value = r.string(r.end());
        break;
      case (2 << 3) | 0:
        value = r.varint() !== 0 ? "true" : "false";
        break;
      case (3 << 3) | 0:
        value = String(r.int64());
        break;
      case (4 << 3) | 1:
        value = String(r.double());
        break;
      default:
        r.skip(tag & 7);
    }
  }
  return value;
}
