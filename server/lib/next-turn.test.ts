import { describe, expect, test } from "bun:test";
import { ScanBudgetError, Slices } from "./next-turn.ts";

describe("Slices", () => {
  test("a slice not used up is not due, and a pass within it never waits", () => {
    expect(new Slices(Number.POSITIVE_INFINITY).due).toBe(false);
  });

  test("a used-up slice is due, and its turn lets what waits on the event loop run first", async () => {
    const slices = new Slices(-1);
    expect(slices.due).toBe(true);
    let ran = false;
    setImmediate(() => {
      ran = true;
    });
    await slices.turn();
    expect(ran).toBe(true);
  });

  test("a pass whose slices add up to more than its budget is stopped with ScanBudgetError", async () => {
    await new Slices(-1, Number.POSITIVE_INFINITY).turn();
    const spent = new Slices(-1, -1);
    const stopped = await spent.turn().catch((error: unknown) => error);
    expect(stopped).toBeInstanceOf(ScanBudgetError);
    expect((stopped as ScanBudgetError).budgetMs).toBe(-1);
  });
});
