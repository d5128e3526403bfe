// How the agent's steps read in the conversation: one line per action, in words, for people.

import { STEP_WORDING } from "../../protocol/ts/protocol.ts";
import type { AgentAction, AgentActionName } from "../../protocol/ts/protocol.ts";

function quoted(text: string, max = 60): string {
  const short = text.length > max ? `${text.slice(0, max - 1)}…` : text;
  return `“${short}”`;
}

/**
 * `Click “Sign in”`, `Type “blue mug” into “Search” and submit`, `Go to https://…`. `name` is what
 * the step's element is called on the page (the server's `targetName`); without it the element
 * is named by its index, as the model saw it.
 */
export function describeAction(action: AgentAction, name?: string): string {
  const line = describe(action, (index) => (name !== undefined && name !== "" ? quoted(name, 40) : `element [${index}]`));
  return line.charAt(0).toUpperCase() + line.slice(1);
}

/** One argument of an action, in the form a wording's placeholder asks for. */
function shown(value: unknown, form: string, element: (index: number) => string): string {
  switch (form) {
    case "quoted":
      return quoted(String(value ?? ""));
    case "round":
      return String(Math.round(Number(value)));
    case "element":
      return element(Number(value));
    case "end": {
      const p = value as { index?: number; x?: number; y?: number };
      return p.index !== undefined ? element(p.index) : `${Math.round(p.x ?? 0)},${Math.round(p.y ?? 0)}`;
    }
    default:
      return String(value);
  }
}

const PLACEHOLDER = /\{(\w+)(?::(\w+)|(\?))?\}/g;

/** A wording's placeholders (`{arg}`, `{arg:form}`, `{arg?}`) filled in; `complete` when every argument it names is given (present, not false). */
function fill(template: string, args: Record<string, unknown>, element: (index: number) => string): { text: string; complete: boolean } {
  let complete = true;
  const text = template.replace(PLACEHOLDER, (_, arg: string, form: string | undefined, condition: string | undefined) => {
    const value = args[arg];
    if (value === undefined || value === false) complete = false;
    return condition !== undefined ? "" : shown(value, form ?? "", element);
  });
  return { text, complete };
}

/**
 * The action in words, from its wording in the protocol (`STEP_WORDING`, generated from
 * `AgentActionKind::wording`): `[a|b]` is the first alternative whose arguments are all given.
 */
function describe(action: AgentAction, element: (index: number) => string): string {
  const [name, args] = Object.entries(action)[0] as [AgentActionName, Record<string, unknown>];
  const chosen = STEP_WORDING[name].replace(/\[([^\]]*)\]/g, (_, alternatives: string) => {
    for (const alternative of alternatives.split("|")) {
      const { text, complete } = fill(alternative, args, element);
      if (complete) return text;
    }
    return "";
  });
  return fill(chosen, args, element).text;
}

/** The task's status as the person reads it. */
export function statusWords(status: string): string {
  const words: Record<string, string> = {
    created: "New",
    running: "Working",
    ongoing: "Ready",
    waiting_confirmation: "Waiting for you",
    waiting_permission: "Waiting for site access",
    takeover: "You have the browser",
    paused: "Paused",
    completed: "Done",
    error: "Failed",
    canceled: "Stopped",
  };
  return words[status] ?? status.replace(/_/g, " ");
}

/** What a running task is doing between its events: the model choosing a step, a step in the browser, the page after it being read. */
export type Activity = { kind: "model"; step: number } | { kind: "action"; step: number; what: string } | { kind: "page"; step: number };

/** What a task waits for, in words, when nothing has happened for a while (seed: no silent stall). */
export function waitingFor(activity: Activity, seconds: number): string {
  const since = `nothing new for ${seconds} s`;
  switch (activity.kind) {
    case "model":
      return `Waiting for the model to answer or choose step ${activity.step} (${since}).`;
    case "action":
      return `Waiting for the browser: step ${activity.step}, ${activity.what} (${since}).`;
    case "page":
      return `Waiting for the browser to show the page after step ${activity.step} (${since}).`;
  }
}
