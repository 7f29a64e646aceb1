/** Alloy bootstrap templates, imported `with { type: "text" }` (bun-types already declares *.yaml). */
declare module "*.alloy" {
  const text: string;
  export default text;
}
