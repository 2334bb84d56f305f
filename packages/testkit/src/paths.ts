// Where the committed fixtures live, resolved from this file so that tests work from any cwd.
import { fileURLToPath } from "node:url";

export const fixturesDir = fileURLToPath(new URL("../fixtures/", import.meta.url));
export const pagesDir = fileURLToPath(new URL("../fixtures/pages/", import.meta.url));
export const tlsDir = fileURLToPath(new URL("../fixtures/tls/", import.meta.url));
