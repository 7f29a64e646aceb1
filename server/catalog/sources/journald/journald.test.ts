import { describe, expect, test } from "bun:test";
import { block, encodeAlloy } from "../../alloy-syntax.ts";
import { findType } from "../../registry.ts";
import { validateComponentConfig } from "../../validate.ts";

/** Looked up as the API does, so the test also fails when the type is not registered. */
const journaldSource = findType("source", "journald")!;

const OUTPUT = block("output", undefined, []);

describe("journald source", () => {
  test("units are kept by an anchored relabel regex, .service assumed as journalctl does; priorities 0..6 as otelcol reads", () => {
    const config = validateComponentConfig("source", "journald", { units: ["sshd", "getty@tty1.service", "docker.socket"] });
    const chain = journaldSource.alloy!(config, "j", OUTPUT);
    const shaped = ["loki.relabel.j", "loki.source.journal.j", "otelcol.receiver.loki.j", "otelcol.processor.transform.j"];
    expect(chain.map((b) => `${b.name}.${b.label}`)).toEqual(shaped);
    expect(encodeAlloy(chain)).toContain(String.raw`regex         = "sshd\\.service|getty@tty1\\.service|docker\\.socket"`);
    const all = encodeAlloy(journaldSource.alloy!(validateComponentConfig("source", "journald", {}), "j", OUTPUT));
    expect(all).not.toContain("__journal__systemd_unit");
    expect(all).toContain('source_labels = ["__journal_priority"]\n\t\tregex         = "[0-6]"');
  });
});
