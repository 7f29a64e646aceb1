/**
 * Two HTTP agents presenting one instance_uid (clones of a VM image, supervisor
 * state included), told apart by their sequence numbers. Over WebSocket two
 * live sessions show it (handler.ts); over HTTP there is no session, only
 * each exchange's sequence_num.
 *
 * One opamp-go agent numbers its messages 0, 1, 2, … from each start
 * (client/internal/nextmessage.go PopPending) and sends one request at a
 * time (as the spec's Plain HTTP Transport requires), re-sending the same
 * bytes, sequence number included, while it
 * retries (client/internal/httpsender.go sendRequestWithRetries). So the
 * numbers one agent sends form one chain, which a restart (back to 0) or a
 * lost message (a gap) ends and a new one begins; an ended chain never
 * advances again. Each chain seen is a stream here: a message one past a
 * stream's last number advances it, one equal to it repeats it (a retry), any
 * other begins a stream.
 *
 * Two streams that advance in turn — X advanced after Y began, Y advanced
 * after that, and X advances again — are two live agents: one agent's
 * messages cannot do that. Nothing weaker counts, so what is judged a clone
 * is one; what is missed: clones that run in step, each sending the number
 * the other just sent (their messages read as one agent's retries), and
 * clones whose polls a load balancer spreads over replicas (each replica
 * sees gaps only). Counted in messages, not time, so timing cannot make a
 * restart look like a clone.
 */

/** Streams kept per instance; the least recently active goes first (an ended chain never advances again). */
export const MAX_STREAMS = 4;

export interface SeqStream {
  /** The last sequence_num seen on it. */
  seq: bigint;
  /** The message (counted per instance) it began with, and the last that advanced it (null: none yet). */
  began: number;
  advanced: number | null;
  /** The instance UID (hex) its agent is told to take, once it was judged a clone: told again until it does. */
  newUid: Promise<string> | null;
}

export class SeqStreams {
  private readonly streams: SeqStream[] = [];
  private messages = 0;

  /**
   * Files one message's sequence_num: the stream it belongs to, and whether it
   * shows a second live agent (false again once the stream's agent was told to
   * take a new UID: its `newUid` says so).
   */
  observe(seq: bigint): { stream: SeqStream; clone: boolean } {
    const tick = ++this.messages;
    // The agent told to take another UID left its stream: a message at that stream's own number is the other
    // agent's, whose numbers ran into it. Only one that advances it is the told agent's (it did not take the UID).
    const left = this.streams.findIndex((s) => s.seq === seq && s.newUid !== null);
    if (left >= 0) this.streams.splice(left, 1);
    const same = this.streams.find((s) => s.seq === seq);
    let next = this.streams.find((s) => s.seq === seq - 1n);
    if (next?.newUid && same) next = undefined;
    if (next && same) {
      // One stream caught up with another's number (a restarted agent reaching its old chain's), or an agent
      // retried beside an ended chain one below: which cannot be told, so they become one new stream and
      // nothing is judged.
      this.streams.splice(this.streams.indexOf(next), 1);
      same.began = tick;
      same.advanced = null;
      return { stream: same, clone: false };
    }
    if (next) {
      const previous = next.advanced;
      next.seq = seq;
      next.advanced = tick;
      const clone =
        next.newUid === null &&
        previous !== null &&
        this.streams.some((y) => y !== next && y.newUid === null && y.advanced !== null && y.advanced > previous && previous > y.began);
      return { stream: next, clone };
    }
    if (same) return { stream: same, clone: false };
    const stream: SeqStream = { seq, began: tick, advanced: null, newUid: null };
    this.streams.push(stream);
    if (this.streams.length > MAX_STREAMS) {
      const active = (s: SeqStream) => s.advanced ?? s.began;
      const stalest = this.streams.reduce((a, b) => (active(b) < active(a) ? b : a));
      this.streams.splice(this.streams.indexOf(stalest), 1);
    }
    return { stream, clone: false };
  }

  get size(): number {
    return this.streams.length;
  }
}
