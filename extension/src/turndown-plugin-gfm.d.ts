// The GFM plugin ships no types: its plugins take the Turndown service they extend.
declare module "@joplin/turndown-plugin-gfm" {
  import type TurndownService from "turndown";
  export const tables: TurndownService.Plugin;
}
