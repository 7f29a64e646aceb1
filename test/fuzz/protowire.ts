/**
 * Hand-rolled protobuf wire encoding for the fuzzers: messages too deep for
 * the generated code to build (its toBinary recurses), fields with the wrong
 * wire type, and arbitraries of damaged protobuf bytes.
 */
import fc from "fast-check";

export function varint(n: number | bigint): Uint8Array {
  let v = BigInt.asUintN(64, BigInt(n));
  const out: number[] = [];
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) b |= 0x80;
    out.push(b);
  } while (v > 0n);
  return Uint8Array.from(out);
}

export function concat(...parts: Uint8Array[]): Uint8Array {
  return Buffer.concat(parts);
}

/** Field `field` with wire type 2 (length-delimited) holding `payload`. */
export function ld(field: number, payload: Uint8Array): Uint8Array {
  return concat(varint((field << 3) | 2), varint(payload.length), payload);
}

export const utf8 = (s: string) => new TextEncoder().encode(s);

/**
 * `depth` levels of a message wrapped around `inner`, each level being the
 * bytes `level(length of what it wraps)` put before it. Linear time: every
 * level is a prefix, so lengths are summed inside out, then written once.
 */
function wrap(inner: Uint8Array, depth: number, level: (length: number) => Uint8Array): Uint8Array {
  const prefixes: Uint8Array[] = new Array(depth);
  let length = inner.length;
  for (let i = depth - 1; i >= 0; i--) {
    prefixes[i] = level(length);
    length += prefixes[i]!.length;
  }
  return concat(...prefixes, inner);
}

/**
 * An AnyValue (OpAMP anyvalue.proto and OTLP common.proto share field
 * numbers) nesting `depth` levels of kvlist_value(6) → KeyValueList.values(1)
 * → KeyValue{key(1) "k", value(2)}.
 */
export function deepKvlist(depth: number): Uint8Array {
  return wrap(ld(1, utf8("x")), depth, (length) => {
    const keyValue = concat(ld(1, utf8("k")), varint((2 << 3) | 2), varint(length));
    const kvLength = keyValue.length + length;
    const list = concat(varint((1 << 3) | 2), varint(kvLength), keyValue);
    const listLength = list.length + length;
    return concat(varint((6 << 3) | 2), varint(listLength), list);
  });
}

/** An AnyValue nesting `depth` levels of array_value(5) → ArrayValue.values(1); cheaper per level. */
export function deepArray(depth: number): Uint8Array {
  return wrap(ld(1, utf8("x")), depth, (length) => {
    const values = concat(varint((1 << 3) | 2), varint(length));
    return concat(varint((5 << 3) | 2), varint(values.length + length), values);
  });
}

/** A KeyValue named `key` holding `value` (encoded AnyValue). */
export const keyValue = (key: string, value: Uint8Array) => concat(ld(1, utf8(key)), ld(2, value));

/** One field with any wire type (including the invalid 6 and 7 and the deprecated groups 3/4) and a payload that may not fit it. */
const field = fc
  .tuple(fc.integer({ min: 1, max: 20 }), fc.integer({ min: 0, max: 7 }), fc.uint8Array({ maxLength: 24 }), fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }))
  .map(([number, wire, payload, n]) => {
    const tag = varint((number << 3) | wire);
    switch (wire) {
      case 0:
        return concat(tag, varint(n));
      case 1:
        return concat(tag, payload.subarray(0, 8));
      case 2:
        return concat(tag, varint(payload.length), payload);
      case 5:
        return concat(tag, payload.subarray(0, 4));
      default:
        return concat(tag, payload);
    }
  });

/**
 * Damaged protobuf bytes built from a valid `sample`: random bytes, the sample
 * cut short, with bytes flipped, fields of random wire types appended or
 * prepended, a length prefix claiming far more than is there.
 */
export function damaged(sample: Uint8Array): fc.Arbitrary<Uint8Array> {
  return fc.oneof(
    fc.uint8Array({ maxLength: 512 }),
    fc.nat({ max: Math.max(0, sample.length - 1) }).map((n) => sample.subarray(0, n)),
    fc.array(fc.tuple(fc.nat({ max: Math.max(0, sample.length - 1) }), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 8 }).map((flips) => {
      const copy = Uint8Array.from(sample);
      for (const [at, byte] of flips) copy[at] = byte;
      return copy;
    }),
    fc.array(field, { minLength: 1, maxLength: 12 }).map((fields) => concat(...fields)),
    fc.tuple(fc.array(field, { maxLength: 4 }), fc.boolean()).map(([fields, before]) => (before ? concat(...fields, sample) : concat(sample, ...fields))),
    fc.integer({ min: 1, max: 15 }).map((number) => concat(sample, varint((number << 3) | 2), varint(0xffffffff))),
  );
}

/** The `message` (field 2) of a google.rpc.Status, as OTLP/HTTP answers a protobuf request's failure; null when absent or malformed. */
export function statusMessage(bytes: Uint8Array): string | null {
  let at = 0;
  const read = (): number => {
    let n = 0;
    for (let shift = 0; at < bytes.length; shift += 7) {
      const b = bytes[at++]!;
      n += (b & 0x7f) * 2 ** shift;
      if (b < 0x80) return n;
    }
    throw new Error("truncated varint");
  };
  try {
    while (at < bytes.length) {
      const tag = read();
      if ((tag & 7) === 0) read();
      else if ((tag & 7) === 2) {
        const length = read();
        const payload = bytes.subarray(at, (at += length));
        if (tag >>> 3 === 2) return new TextDecoder().decode(payload);
      } else return null;
    }
  } catch {
    return null;
  }
  return null;
}
