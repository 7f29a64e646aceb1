/**
 * A value the collector takes from its host's environment when it loads its
 * config (a sensitive field's `{env: NAME}`). The plan carries it as this
 * object, and each writer spells it natively: `${env:NAME}` in collector
 * YAML (where every other `$` is escaped), `sys.env("NAME")` in Alloy.
 */
export class HostEnvValue {
  constructor(readonly name: string) {}
}
