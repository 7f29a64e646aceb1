/**
 * An index of the attributes matchers read, kept current with the collectors
 * view (store/view.ts ViewListener): per key, per value, the ids holding it.
 * Two layers, as shared/collector-attributes.ts attributeLayers gives them:
 * svc's own values (tags, environment, virtual) and the reported ones no own
 * value overrides. A matcher on key k reads the own layer, and the reported
 * one only when k is trusted now, so a change of trust needs no rebuild.
 *
 * A list of matchers is answered by looking its value up (=), or evaluating
 * its regular expression once per distinct value of its key (not once per
 * collector; on a key of nearly as many values as collectors, per collector
 * met as a scan does), with the matcher's own semantics
 * (an absent key reads as ""): the ids it selects are the postings of the
 * values it accepts, or, when it accepts "", the fleet less the postings of
 * the values it rejects. Collectors lists the smallest selection of a matcher
 * that rejects "" and checks the others per id (a map lookup and a verdict
 * remembered per value), or walks the view in id order when that costs less.
 */
import type { TagFilter } from "../../shared/collector-filter.ts";
import type { Collector } from "../../shared/collectors.ts";
import type { Matcher } from "../../shared/matchers.ts";
import { SCAN_SLICE_MS, Slices } from "../lib/next-turn.ts";
import { attributeLayers, isOwnKey, type AttributeLayers, type TrustedKeys } from "./attributes.ts";

/** The ids holding one value: a value one collector holds (every collector.id and collector.name) is its id alone, no Set. */
type Holders = Set<string> | string;

/** key → value → ids. */
type Postings = Map<string, Map<string, Holders>>;

const count = (holders: Holders): number => (typeof holders === "string" ? 1 : holders.size);

/** Ids one matcher selects, as the postings of the values it accepts (disjoint: one value per key and collector). */
interface Selection {
  sets: Holders[];
  size: number;
}

/**
 * A regular expression is evaluated per distinct value up front when its key has at most one value per this many
 * collectors; on a key with more (collector.name has one per collector) that would cost what a scan costs, and more
 * when a page fills early, so it is evaluated per collector met instead, as the scan does.
 */
const EAGER_SHARE = 8;

/**
 * How a matcher is judged: `compare` (= and !=, cheaper than a remembered verdict), `eager` (a regular expression,
 * its verdict remembered per value, all of the key's values judged up front), `lazy` (a regular expression judged
 * per collector met).
 */
type Judging = "compare" | "eager" | "lazy";

/** One matcher over the index: its verdict per value. */
class MatcherAnswer {
  readonly #verdicts = new Map<string, boolean>();

  constructor(
    readonly matcher: Matcher,
    /** Whether the key's reported layer is read (the key is trusted). */
    readonly trusted: boolean,
    readonly judging: Judging,
  ) {}

  /** Whether the matcher holds for `value`. */
  accepts(value: string): boolean {
    if (this.judging !== "eager") return this.matcher.matches(value);
    let verdict = this.#verdicts.get(value);
    if (verdict === undefined) {
      verdict = this.matcher.matches(value);
      this.#verdicts.set(value, verdict);
    }
    return verdict;
  }
}

/** Matchers answered over the index: whether each id is selected, and the smallest selection that can be listed. */
export interface IndexAnswer {
  /** Whether every matcher holds for the collector `id` (one that is not indexed holds for none). */
  holds(id: string): boolean;
  /**
   * The ids of the most selective matcher that does not accept "", or tag filter, (a superset of the answer, unordered)
   * and how many; null when there is none (every matcher accepts "": each selects the fleet less some), or a matcher is
   * judged per collector: walk the view instead.
   */
  listable: { size: number; ids: () => Iterable<string> } | null;
}

export class AttributeIndex {
  private readonly layers = new Map<string, AttributeLayers>();
  private readonly own: Postings = new Map();
  private readonly reported: Postings = new Map();

  /** Collectors indexed. */
  get size(): number {
    return this.layers.size;
  }

  /** Takes the collector as it is now; one whose attributes did not change costs one comparison. */
  put(collector: Collector): void {
    const next = attributeLayers(collector);
    const prior = this.layers.get(collector.id);
    if (prior !== undefined) {
      if (sameValues(prior.own, next.own) && sameValues(prior.reported, next.reported)) return;
      this.unpost(collector.id, prior);
    }
    this.layers.set(collector.id, next);
    post(this.own, collector.id, next.own);
    post(this.reported, collector.id, next.reported);
  }

  remove(id: string): void {
    const prior = this.layers.get(id);
    if (prior === undefined) return;
    this.layers.delete(id);
    this.unpost(id, prior);
  }

  /** Whether some collector holds `key` as its own (a tag, for any key not svc's own), and whether some reports it without. */
  holders(key: string): { own: boolean; reported: boolean } {
    return { own: this.own.has(key), reported: this.reported.has(key) };
  }

  /**
   * Answers `matchers` under `trusted`: a regular expression on a key of few
   * values evaluated once per distinct value, yielding every SCAN_SLICE_MS;
   * past `budgetMs` of its own time it throws ScanBudgetError, as a scan of
   * the view does. One on a key of many values (EAGER_SHARE) is left to
   * `holds`, and the answer is not listable: a walk of the view (which yields) judges it.
   * `tags` (the list filter's) only narrow what is listed: `holds` does not check them.
   */
  async answer(matchers: readonly Matcher[], trusted: TrustedKeys, budgetMs: number, tags: readonly TagFilter[] = []): Promise<IndexAnswer> {
    const answers = matchers
      .map((m) => new MatcherAnswer(m, trusted.has(m.name), this.judging(m, trusted.has(m.name))))
      // Cheapest first: `holds` stops at the first that fails.
      .sort((a, b) => Number(a.judging === "lazy") - Number(b.judging === "lazy"));
    const slices = new Slices(SCAN_SLICE_MS, budgetMs);
    for (const answer of answers.filter((a) => a.judging === "eager")) {
      // Values are read off a copy: the index may change while this yields, and a value come meanwhile is judged when met.
      for (const value of [...this.valuesOf(answer.matcher.name, answer.trusted), ""]) {
        if (slices.due) await slices.turn();
        answer.accepts(value);
      }
    }
    // From here on synchronous: sizes and postings are of one moment.
    const listable = answers.some((answer) => answer.judging === "lazy")
      ? null
      : [
          ...answers.filter((answer) => !answer.accepts("")).map((answer) => this.selection(answer)),
          ...tags.filter((tag) => tagIndexed(tag.key)).map((tag) => this.tagSelection(tag)),
        ].reduce<Selection | null>((a, b) => (a === null || b.size < a.size ? b : a), null);
    return {
      holds: (id) => {
        const layers = this.layers.get(id);
        if (layers === undefined) return false;
        for (const answer of answers) {
          const key = answer.matcher.name;
          const value = Object.hasOwn(layers.own, key) ? layers.own[key]! : answer.trusted && Object.hasOwn(layers.reported, key) ? layers.reported[key]! : "";
          if (!answer.accepts(value)) return false;
        }
        return true;
      },
      listable: listable && {
        size: listable.size,
        *ids() {
          for (const ids of listable.sets) {
            if (typeof ids === "string") yield ids;
            else yield* ids;
          }
        },
      },
    };
  }

  /** How `matcher` is judged (Judging): a regular expression up front only on a key of at most one value per EAGER_SHARE collectors. */
  private judging(matcher: Matcher, trusted: boolean): Judging {
    if (matcher.op === "=" || matcher.op === "!=") return "compare";
    const values = (this.own.get(matcher.name)?.size ?? 0) + (trusted ? (this.reported.get(matcher.name)?.size ?? 0) : 0);
    return values * EAGER_SHARE <= this.layers.size ? "eager" : "lazy";
  }

  /** The distinct values a matcher on `key` reads (the reported layer's when trusted), "" of absent keys aside. */
  private *valuesOf(key: string, trusted: boolean): Generator<string> {
    yield* this.own.get(key)?.keys() ?? [];
    if (trusted) yield* this.reported.get(key)?.keys() ?? [];
  }

  /** What a matcher that rejects "" selects: the postings of the values it accepts. */
  private selection(answer: MatcherAnswer): Selection {
    const sets: Holders[] = [];
    let size = 0;
    const { name, op, value: wanted } = answer.matcher;
    for (const byValue of [this.own.get(name), answer.trusted ? this.reported.get(name) : undefined]) {
      if (byValue === undefined) continue;
      if (op === "=") {
        const ids = byValue.get(wanted);
        if (ids === undefined) continue;
        sets.push(ids);
        size += count(ids);
        continue;
      }
      for (const [value, ids] of byValue) {
        if (!answer.accepts(value)) continue;
        sets.push(ids);
        size += count(ids);
      }
    }
    return { sets, size };
  }

  /** The collectors holding a tag (with that value, when given): the own layer's postings of its key. */
  private tagSelection({ key, value }: TagFilter): Selection {
    const byValue = this.own.get(key);
    const sets = byValue === undefined ? [] : value === undefined ? [...byValue.values()] : [byValue.get(value)].filter((ids) => ids !== undefined);
    return { sets, size: sets.reduce((sum, ids) => sum + count(ids), 0) };
  }

  private unpost(id: string, layers: AttributeLayers): void {
    unpost(this.own, id, layers.own);
    unpost(this.reported, id, layers.reported);
  }
}

/**
 * Whether the own layer's postings of `key` are exactly the collectors the tag filter passes: not for svc's own keys
 * (environment and the virtual ones override a tag), nor a name every object answers (`constructor`, `__proto__`:
 * the filter reads `tags[key]`, which finds them on any collector).
 */
function tagIndexed(key: string): boolean {
  return !isOwnKey(key) && !(key in Object.prototype);
}

function post(postings: Postings, id: string, values: Record<string, string>): void {
  for (const key in values) {
    let byValue = postings.get(key);
    if (byValue === undefined) postings.set(key, (byValue = new Map()));
    const value = values[key]!;
    const ids = byValue.get(value);
    if (ids === undefined) byValue.set(value, id);
    else if (typeof ids === "string") byValue.set(value, new Set([ids, id]));
    else ids.add(id);
  }
}

function unpost(postings: Postings, id: string, values: Record<string, string>): void {
  for (const key in values) {
    const byValue = postings.get(key);
    const value = values[key]!;
    const ids = byValue?.get(value);
    if (ids === undefined) continue;
    if (typeof ids !== "string") {
      ids.delete(id);
      if (ids.size === 1) byValue!.set(value, ids.values().next().value!);
      if (ids.size > 0) continue;
    } else if (ids !== id) continue;
    byValue!.delete(value);
    if (byValue!.size === 0) postings.delete(key);
  }
}

function sameValues(a: Record<string, string>, b: Record<string, string>): boolean {
  let count = 0;
  for (const key in a) {
    if (a[key] !== b[key]) return false;
    count++;
  }
  return count === Object.keys(b).length;
}
