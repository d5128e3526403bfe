// A structured answer (the `data` of a request with an answer format): a table when it is a
// list of records (or holds one), JSON otherwise, with Copy and Download.
import { h } from "./dom.ts";

type Row = Record<string, unknown>;

function isRecord(value: unknown): value is Row {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The records of `data` shown as a table, if it is (or holds exactly one) list of records. */
export function tableOf(data: unknown): { rows: Row[]; columns: string[] } | undefined {
  let rows: unknown = data;
  if (isRecord(data)) {
    const lists = Object.values(data).filter((v) => Array.isArray(v));
    if (lists.length !== 1) return undefined;
    rows = lists[0];
  }
  if (!Array.isArray(rows) || rows.length === 0 || !rows.every(isRecord)) return undefined;
  const columns: string[] = [];
  for (const row of rows) for (const key of Object.keys(row)) if (!columns.includes(key)) columns.push(key);
  return { rows, columns };
}

function cellText(value: unknown): string {
  if (value === undefined || value === null) return "";
  return typeof value === "object" ? JSON.stringify(value) : String(value);
}

/** RFC 4180 CSV of a table. */
export function toCsv(table: { rows: Row[]; columns: string[] }): string {
  const field = (text: string) => (/[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text);
  const lines = [table.columns.map(field).join(",")];
  for (const row of table.rows) lines.push(table.columns.map((c) => field(cellText(row[c]))).join(","));
  return `${lines.join("\r\n")}\r\n`;
}

function download(name: string, type: string, body: string): void {
  const url = URL.createObjectURL(new Blob([body], { type }));
  const link = h("a", { href: url, download: name });
  link.click();
  setTimeout(() => URL.revokeObjectURL(url), 1_000);
}

/** The answer's view. `valid` false: data the model gave that does not match the format. */
export function answerView(data: unknown, valid: boolean): HTMLElement {
  const json = JSON.stringify(data, null, 2);
  const table = tableOf(data);
  const copy = h("button", {
    class: "btn btn-small",
    type: "button",
    "data-testid": "answer-copy",
    onclick: () => {
      void navigator.clipboard.writeText(json).then(
        () => (copy.textContent = "Copied"),
        () => (copy.textContent = "Copy failed"),
      );
    },
  }, "Copy JSON");
  const actions = h(
    "div",
    { class: "answer-actions" },
    copy,
    h("button", { class: "btn btn-small", type: "button", "data-testid": "answer-download", onclick: () => download("answer.json", "application/json", json) }, "Download JSON"),
    table && h("button", { class: "btn btn-small", type: "button", "data-testid": "answer-csv", onclick: () => download("answer.csv", "text/csv", toCsv(table)) }, "Download CSV"),
  );
  const body = table
    ? h(
        "div",
        { class: "answer-table-wrap" },
        h(
          "table",
          { class: "answer-table", "data-testid": "answer-table" },
          h("thead", {}, h("tr", {}, table.columns.map((c) => h("th", {}, c)))),
          h("tbody", {}, table.rows.map((row) => h("tr", {}, table.columns.map((c) => h("td", {}, cellText(row[c])))))),
        ),
      )
    : h("pre", { class: "answer-json", "data-testid": "answer-json" }, json);
  return h(
    "div",
    { class: "answer", "data-testid": "answer-data", "data-valid": String(valid) },
    h("div", { class: "answer-title" }, valid ? "Answer" : "Answer (does not match the format)"),
    body,
    actions,
  );
}

/** The answer format typed in the composer: a JSON Schema, or why it is not one. */
export function parseAnswerFormat(text: string): { schema?: unknown; error?: string } {
  if (text.trim() === "") return {};
  try {
    const schema: unknown = JSON.parse(text);
    if (!isRecord(schema)) return { error: "The answer format must be a JSON Schema object, e.g. {\"type\": \"object\", …}." };
    return { schema };
  } catch (error) {
    return { error: `The answer format is not JSON: ${(error as Error).message}` };
  }
}
