// Issue 33's rows alone (`node --expose-gc --import tsx bench/agent/footprint/main.ts`): the
// same section `npm run bench:agent` prints, without the other cases. Prints it, then its JSON.
import { loadConfig } from "../config.js";
import { runFootprint } from "./index.js";

const section = await runFootprint(loadConfig(), (line) => process.stderr.write(line + "\n"));
if (section !== undefined) console.log(section.text + "\n\n" + JSON.stringify({ bench: "agent-footprint", ...section.json }));
