import { describe, expect, test } from "bun:test";
import { findType } from "../../registry.ts";
import { validateComponentConfig } from "../../validate.ts";

/** Looked up as the API does, so the test also fails when the type is not registered. */
const syslogSource = findType("source", "syslog")!;

describe("syslog source", () => {
  test("the transport picks the listener key", () => {
    const config = validateComponentConfig("source", "syslog", { transport: "udp", listen_address: ":514" });
    expect(syslogSource.otelcol(config).config).toEqual({ protocol: "rfc5424", udp: { listen_address: ":514" } });
  });
});
