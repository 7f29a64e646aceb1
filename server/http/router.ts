/**
 * Matches a method and path against the route table. Literal segments win
 * over parameters, so `/collectors/snippet` is never read as an id.
 */
import { AppError, NotFoundError } from "../errors.ts";
import { decodePathSegment } from "../lib/path.ts";
import type { Method, Route } from "./route.ts";

interface Node {
  literal: Map<string, Node>;
  param?: { name: string; node: Node };
  routes: Map<Method, Route>;
}

function newNode(): Node {
  return { literal: new Map(), routes: new Map() };
}

export interface Match {
  route: Route;
  params: Record<string, string>;
}

export class Router {
  private readonly root = newNode();

  constructor(routes: Route[]) {
    for (const route of routes) this.add(route);
  }

  private add(route: Route): void {
    let node = this.root;
    for (const segment of route.path.split("/").filter(Boolean)) {
      const param = /^\{(\w+)\}$/.exec(segment);
      if (param) {
        if (node.param && node.param.name !== param[1]) {
          throw new Error(`route ${route.path}: parameter {${param[1]}} clashes with {${node.param.name}}`);
        }
        node.param ??= { name: param[1]!, node: newNode() };
        node = node.param.node;
      } else {
        let next = node.literal.get(segment);
        if (!next) node.literal.set(segment, (next = newNode()));
        node = next;
      }
    }
    if (node.routes.has(route.method)) throw new Error(`route ${route.method} ${route.path} is declared twice`);
    node.routes.set(route.method, route);
  }

  /** Throws 404 for an unknown path and 405 (with Allow) for a known path and another method. */
  match(method: string, path: string): Match {
    const params: Record<string, string> = {};
    const found = this.walk(this.root, path.split("/").filter(Boolean), 0, params);
    if (!found) throw new NotFoundError("Route", path);
    const route = found.routes.get(method as Method);
    if (!route) {
      const allow = [...found.routes.keys()].join(", ");
      throw new AppError(405, "method_not_allowed", `${method} is not allowed here; use ${allow}.`, [], { Allow: allow });
    }
    return { route, params };
  }

  private walk(node: Node, segments: string[], i: number, params: Record<string, string>): Node | null {
    if (i === segments.length) return node.routes.size > 0 ? node : null;
    const segment = segments[i]!;
    const literal = node.literal.get(segment);
    if (literal) {
      const found = this.walk(literal, segments, i + 1, params);
      if (found) return found;
    }
    if (node.param) {
      const value = decodePathSegment(segment);
      const found = this.walk(node.param.node, segments, i + 1, params);
      if (found) {
        params[node.param.name] = value;
        return found;
      }
    }
    return null;
  }
}
