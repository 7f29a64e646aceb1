import { expect, test } from "bun:test";
import type { Collector } from "../../shared/collectors.ts";
import { ValidationError } from "../errors.ts";
import { AttributeIndex } from "./attribute-index.ts";
import { refuseUntrusted, type KeyHolders } from "./trust.ts";

function collector(i: number, tags: Record<string, string>, reported?: Record<string, string>): Collector {
  return {
    id: `c${i}`,
    name: `c${i}`,
    environment: null,
    managementMode: "opamp",
    tags,
    ...(reported ? { reported } : {}),
    status: "online",
    lastSeen: null,
    health: null,
    createdAt: "",
    updatedAt: "",
  };
}

/** A fleet's attribute index: only its last collector reports `team`, or tags it. */
function fleet(last: Collector): KeyHolders {
  const index = new AttributeIndex();
  for (const c of [...Array.from({ length: 12_000 }, (_, i) => collector(i, { env: "prod" }, { "host.name": `h${i}` })), last]) index.put(c);
  return (key) => index.holders(key);
}

function refusal(run: () => void): ValidationError | null {
  try {
    run();
    return null;
  } catch (error) {
    if (error instanceof ValidationError) return error;
    throw error;
  }
}

test("a matcher on a key only collectors report, untrusted, is refused naming each; svc's own, trusted, tagged and unknown keys pass", async () => {
  const reporter = collector(99_999, {}, { team: "payments" });
  const refused = refusal(() => refuseUntrusted(["env", "team", "host.name", "environment", "collector.name"], "match", new Set(), fleet(reporter)));
  expect(refused!.details.map((d) => d.path)).toEqual(["match[1]", "match[2]"]);
  expect(refused!.details[0]!.message).toContain('"team" is an attribute collectors report about themselves');
  expect(refusal(() => refuseUntrusted(["team", "host.name"], "match", new Set(["team", "host.name"]), fleet(reporter)))).toBeNull();
  // A tag on any collector, the last one included, makes the key svc's to set: matchers read the tags.
  expect(refusal(() => refuseUntrusted(["team"], "matchers", new Set(), fleet(collector(99_999, { team: "search" }, { team: "payments" }))))).toBeNull();
  expect(refusal(() => refuseUntrusted(["rack", "future"], "matchers", new Set(), fleet(reporter)))).toBeNull();
});
