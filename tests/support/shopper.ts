// A scripted model for agent runs: turns that call the AgentOutput tool the way a real model
// would, picking elements by their label in the page they are shown (the `<interactive_elements>`
// list of the run's latest observation), so a script does not depend on the index numbers the
// extension happens to assign.
import type { ScriptTurn } from "../llm-server/server.ts";

/** The index of the first element whose line in the page's element list contains `label`. */
export function indexOf(userText: string, label: string): number {
  const list = /<interactive_elements>\n([\s\S]*?)\n<\/interactive_elements>/.exec(userText)?.[1] ?? "";
  for (const line of list.split("\n")) {
    const index = /\[(\d+)\]</.exec(line);
    if (index !== null && line.includes(label)) return Number(index[1]);
  }
  throw new Error(`the model sees no element "${label}" on the page:\n${list || userText}`);
}

/** A turn calling AgentOutput with `action`. */
export function agentStep(action: Record<string, unknown>, memory = "", text?: string): ScriptTurn {
  return {
    text,
    toolCalls: [
      {
        name: "AgentOutput",
        arguments: { evaluation_previous_goal: "As expected.", memory, next_goal: `Do ${Object.keys(action)[0]}.`, action },
      },
    ],
  };
}

/** A turn acting on the element labelled `label` in the page the request shows. */
export function onElement(label: string, action: (index: number) => Record<string, unknown>, memory = ""): ScriptTurn {
  return { respond: ({ userText }) => agentStep(action(indexOf(userText, label)), memory) };
}

/** The whole purchase of two blue mugs at the fixture shop at `shop` (…/shop/index.html). */
export function buyTwoBlueMugs(shop: string): ScriptTurn[] {
  return [
    agentStep({ navigate: { url: shop } }, "Nothing done yet.", "I'll open the shop first."),
    onElement("Search products", (index) => ({ type: { index, text: "blue mug", submit: true } }), "Shop open."),
    onElement("Blue mug", (index) => ({ click: { index } }), "Search results show the blue mug."),
    onElement("Quantity", (index) => ({ type: { index, text: "2" } }), "On the blue mug's page."),
    onElement("Add to cart", (index) => ({ click: { index } }), "Quantity set to 2."),
    onElement("Cart (", (index) => ({ click: { index } }), "Added 2 blue mugs."),
    agentStep({ done: { success: true, text: "Added two blue mugs to the cart: it shows Blue mug × 2, 24 €." } }, "Cart checked."),
  ];
}

/**
 * A model that buys two blue mugs at the fixture shop by looking at the page it is shown, not by
 * counting turns: asked again (a call re-run after a restart, a retry), it answers for the page
 * as it is then. `turns` copies of it, for a queue that retries and re-runs may draw from.
 */
export function twoBlueMugsPolicy(shop: string, turns = 40): ScriptTurn[] {
  const decide = twoBlueMugsStep(shop);
  return Array.from({ length: turns }, () => ({ respond: decide }));
}

/** The next step toward two blue mugs in the cart of the shop at `shop`, for the page a request shows. */
export function twoBlueMugsStep(shop: string): (request: { userText: string }) => ScriptTurn {
  return ({ userText }) => {
    const url = /^url: (.*)$/m.exec(userText)?.[1] ?? "";
    const elements = /<interactive_elements>\n([\s\S]*?)\n<\/interactive_elements>/.exec(userText)?.[1] ?? "";
    const inCart = Number(/Cart \((\d+)\)/.exec(elements)?.[1] ?? 0);
    // A sign-in window the shop opened (chaos): answering it closes it, and the task goes on in the shop.
    if (url.includes("/popup-auth.html")) return agentStep({ click: { index: indexOf(userText, "Continue as Ann") } }, "A sign-in window opened.");
    if (url.includes("/shop/cart.html")) {
      return agentStep({ done: { success: true, text: `The cart shows ${inCart} blue mugs.` } }, "In the cart.");
    }
    if (inCart >= 2) return agentStep({ click: { index: indexOf(userText, "Cart (") } }, "Added them.");
    if (url.includes("/shop/product.html")) {
      const quantity = elements.split("\n").find((line) => line.includes("type=number")) ?? "";
      if (/value=2\b/.test(quantity)) return agentStep({ click: { index: indexOf(userText, "Add to cart") } }, "Quantity is 2.");
      return agentStep({ type: { index: indexOf(userText, "type=number"), text: "2" } }, "On the blue mug's page.");
    }
    if (url.includes("/shop/results.html")) return agentStep({ click: { index: indexOf(userText, "Blue mug") } }, "Results show the blue mug.");
    if (url.includes("/shop/index.html")) return agentStep({ type: { index: indexOf(userText, "Search products"), text: "blue mug", submit: true } }, "Shop open.");
    return agentStep({ navigate: { url: shop } }, "Nothing done yet.");
  };
}
