/**
 * The UI reaches the API only through its typed client (server/ui/client.ts,
 * over the transport in server/ui/api.ts): paths come from the route contract
 * (shared/api-routes.ts), so the compiler checks them and types the answers.
 * A module that fetches by itself, writes /api/v1, or splices values into an
 * API path or query string has written a path by hand; this names where.
 */
import { expect, test } from "bun:test";
import { API_ROUTES } from "../../shared/api-routes.ts";
import { type LineCheck, uiLinesFound } from "./ui-lines.ts";

const CLIENT = new Set(["client.ts", "api.ts"]);
/** The first segments of the API's paths, e.g. "collectors" (the UI's own pages live under /ui). */
const SEGMENTS = [...new Set(Object.keys(API_ROUTES).map((key) => key.split(" ")[1]!.split("/")[1]!))];
const API_LITERAL = new RegExp(`(["'\`])/(?:${SEGMENTS.join("|")})\\b[^"'\`]*\\1`, "g");

const PATTERNS: LineCheck[] = [
  ["a request made without the client", (line) => /\b(fetch|apiRequest)\(|new EventSource\((?!apiUrl\()/.test(line)],
  ["an /api/v1 path written by hand", (line) => line.includes("/api/v1")],
  [
    "an API path or query built by hand (pass params and query to the client)",
    (line) => [...line.matchAll(API_LITERAL)].some(([literal]) => literal.includes("?") || literal.includes("encodeURIComponent")),
  ],
];

/** The line without a trailing or whole-line comment, so prose may name paths. */
function code(line: string): string {
  const trimmed = line.trim();
  if (trimmed.startsWith("*") || trimmed.startsWith("/*") || trimmed.startsWith("//")) return "";
  const comment = line.indexOf(" // ");
  return comment === -1 ? line : line.slice(0, comment);
}

test("no UI module writes an API path by hand: every call goes through the typed client", async () => {
  const inCode = PATTERNS.map(([what, finds]): LineCheck => [what, (line) => finds(code(line))]);
  expect(await uiLinesFound(inCode, CLIENT)).toEqual([]);
});

test("the check sees a path written by hand", () => {
  const [, , built] = PATTERNS;
  expect(built![1]("api.get(`/collectors/${encodeURIComponent(id)}`)")).toBe(true);
  expect(built![1]("api.get(`/audit?${query}`)")).toBe(true);
  expect(built![1]('api.get("/collectors/{id}", { params: { id } })')).toBe(false);
});
