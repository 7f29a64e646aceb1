/** The server's version, from package.json: a leaf module, so the edge reads it without importing the assembly. */
import pkg from "../package.json" with { type: "json" };

export const VERSION: string = pkg.version;
