import { expect, test } from "bun:test";
import { formatCondition, formatString, formatValue } from "./format.ts";
import { parseCondition } from "./parser.ts";

const canonical = (source: string) => formatCondition(parseCondition(source));

test("prints canonical text with parentheses only where the tree needs them", () => {
  expect(canonical('  ( body=="a" )or(severity_number>=9 and not(true))')).toBe('body == "a" or severity_number >= 9 and not true');
  expect(canonical("(true or false) and true")).toBe("(true or false) and true");
  expect(canonical("(true or false) or true")).toBe("(true or false) or true");
  expect(canonical("true and (false and true)")).toBe("true and (false and true)");
  expect(canonical("not (true and false)")).toBe("not (true and false)");
  expect(canonical("not (not true)")).toBe("not (not true)");
  expect(canonical('IsMatch( resource.attributes["k"] , "x" ) == IsString(body)')).toBe('IsMatch(resource.attributes["k"], "x") == IsString(body)');
  expect(canonical('attributes["a"]["b"][0] != nil')).toBe('attributes["a"]["b"][0] != nil');
});

test("numbers print so that they lex back as the same kind", () => {
  const value = (source: string) => formatValue((parseCondition(`body == ${source}`) as { right: Parameters<typeof formatValue>[0] }).right);
  expect(value("+5")).toBe("5");
  expect(value("-9223372036854775808")).toBe("-9223372036854775808");
  expect(value("2.0")).toBe("2.0");
  expect(value("-0.0")).toBe("-0.0");
  expect(value(".5")).toBe("0.5");
  expect(value("1.0e21")).toBe("1.0e+21");
  expect(value("1.5e-7")).toBe("1.5e-7");
  expect(value("1.0e-7")).toBe("1.0e-7");
});

test("strings escape quotes, backslashes and controls, and never end in an escaped backslash", () => {
  expect(formatString('a"b\\c\n\t\r\u0001\u007fé😀')).toBe('"a\\"b\\\\c\\n\\t\\r\\x01\\x7fé😀"');
  expect(formatString("C:\\")).toBe(String.raw`"C:\x5c"`);
  expect(formatString("\\\\")).toBe(String.raw`"\\\x5c"`);
  for (const s of ["C:\\", "\\\\", 'x\\"', "\\"]) {
    const parsed = parseCondition(`body == ${formatString(s)}`) as { right: { value: string } };
    expect(parsed.right.value).toBe(s);
  }
});
