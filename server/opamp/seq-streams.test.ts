/**
 * Sequence streams on their own: the message orders one opamp-go HTTP agent
 * can produce (restarts, retries, gaps) are never a clone; two agents that
 * poll in turn are, once each has advanced after the other.
 */
import { describe, expect, test } from "bun:test";
import { MAX_STREAMS, SeqStreams } from "./seq-streams.ts";

/** Files the numbers in order; the index of the first message judged a clone, or -1. */
function firstClone(seqs: number[], streams = new SeqStreams()): number {
  return seqs.findIndex((seq) => streams.observe(BigInt(seq)).clone);
}

describe("one agent is never a clone", () => {
  test("numbering on, with restarts back to 0, retries of the same number and lost messages", () => {
    const run = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);
    // Runs to 40, restarts and passes its old numbers, retries 12 twice, loses 20 and 21, restarts again.
    const seqs = [...run(0, 40), ...run(0, 12), 12, 12, ...run(13, 19), ...run(22, 60), ...run(0, 45)];
    expect(firstClone(seqs)).toBe(-1);
  });

  test("a retry beside an ended chain one below it, then on", () => {
    // A chain ended at 6 (lost 7); a restart reaches 7, whose answer is lost: the retry of 7 is beside 6.
    expect(firstClone([0, 1, 2, 3, 4, 5, 6, 9, 10, 0, 1, 2, 3, 4, 5, 6, 7, 7, 8, 9, 10, 11, 12])).toBe(-1);
  });

  test("polls spread over replicas: this one sees every other number only", () => {
    expect(firstClone(Array.from({ length: 50 }, (_, i) => 2 * i))).toBe(-1);
  });
});

describe("two agents with one instance_uid", () => {
  test("a clone booted beside a running original: found once each advanced after the other began", () => {
    const streams = new SeqStreams();
    for (let seq = 0; seq <= 100; seq++) streams.observe(BigInt(seq));
    // original 101, clone 0, original 102, clone 1, original 103 ...
    const seen = [0, 101, 1, 102].map((seq) => streams.observe(BigInt(seq)));
    expect(seen.map((s) => s.clone)).toEqual([false, false, false, true]);
    // The original's stream was judged: once it is told to take another UID it is not judged again, nor is the clone's against it.
    const told = seen[3]!.stream;
    expect(told.seq).toBe(102n);
    told.newUid = Promise.resolve("ab");
    expect(streams.observe(2n).clone).toBe(false);
    expect(streams.observe(103n)).toEqual({ stream: told, clone: false });
    expect(streams.observe(3n).clone).toBe(false);
  });

  test("after the split, the other agent's numbers running into the told stream's are its own: told only if it advances that stream", () => {
    const streams = new SeqStreams();
    for (const seq of [0, 1, 2, 3, 4, 5, 0, 6, 1, 2]) streams.observe(BigInt(seq));
    const judged = streams.observe(7n);
    expect(judged.clone).toBe(true);
    judged.stream.newUid = Promise.resolve("ab");
    // The told agent takes its new UID; the other's 3 … 9 pass the told stream's 7, alone and beside its own 6.
    for (const seq of [3, 4, 5, 6, 7, 8, 9]) {
      const seen = streams.observe(BigInt(seq));
      expect({ seq, clone: seen.clone, told: seen.stream.newUid !== null }).toEqual({ seq, clone: false, told: false });
    }
    // A told agent that goes on with the old UID advances its stream: it is told again.
    const again = new SeqStreams();
    for (const seq of [0, 1, 2, 3, 4, 5, 0, 6, 1, 2]) again.observe(BigInt(seq));
    again.observe(7n).stream.newUid = Promise.resolve("ab");
    expect(again.observe(8n).stream.newUid).not.toBeNull();
  });

  test("whichever speaks second after the interleaving is the one told", () => {
    expect(firstClone([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 10, 11, 1, 2, 12])).toBe(15);
  });

  test("one a step behind the other: found on the third turn", () => {
    expect(firstClone([0, 1, 0, 2, 1, 3, 2, 4])).toBe(5);
  });

  test("clones in step, each sending the number the other just sent, read as one agent's retries: not found", () => {
    expect(firstClone([0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5])).toBe(-1);
  });
});

test(`at most ${MAX_STREAMS} streams are kept: the least recently active goes`, () => {
  const streams = new SeqStreams();
  for (const seq of [0, 1, 10, 20, 30, 40, 41, 50]) streams.observe(BigInt(seq));
  expect(streams.size).toBe(MAX_STREAMS);
  // 40→41 advanced most recently and is kept: 42 continues it.
  expect(streams.observe(42n).stream.seq).toBe(42n);
  expect(streams.size).toBe(MAX_STREAMS);
});
