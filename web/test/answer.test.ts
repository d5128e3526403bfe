// The structured answer's pure parts: when data is a table, its CSV, and the format field.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseAnswerFormat, tableOf, toCsv } from "../src/answer.ts";

describe("a structured answer", () => {
  it("is a table when it is a list of records, or holds exactly one, with every key a column", () => {
    const rows = [{ name: "Mug", price: 12 }, { name: "Cup", size: "L" }];
    assert.deepEqual(tableOf(rows)?.columns, ["name", "price", "size"]);
    assert.deepEqual(tableOf({ products: rows, total: 2 })?.rows, rows);
    assert.equal(tableOf({ a: rows, b: rows }), undefined, "two lists: which one?");
    assert.equal(tableOf([1, 2]), undefined);
    assert.equal(tableOf([]), undefined);
    assert.equal(tableOf({ price: 12 }), undefined);
  });

  it("goes to CSV with quoting where a field needs it", () => {
    const csv = toCsv({ columns: ["name", "note"], rows: [{ name: 'Mug "XL"', note: "a, b" }, { name: "Cup", note: { size: "L" } }] });
    assert.equal(csv, 'name,note\r\n"Mug ""XL""","a, b"\r\nCup,"{""size"":""L""}"\r\n');
  });

  it("takes a JSON Schema object in the format field, and says what is wrong otherwise", () => {
    assert.deepEqual(parseAnswerFormat(""), {});
    assert.deepEqual(parseAnswerFormat('{"type": "array"}'), { schema: { type: "array" } });
    assert.match(parseAnswerFormat("{type: array}").error ?? "", /not JSON/);
    assert.match(parseAnswerFormat("[1]").error ?? "", /JSON Schema object/);
  });
});
