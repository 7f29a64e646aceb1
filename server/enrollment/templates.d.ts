/** Alloy bootstrap templates and install.sh, imported `with { type: "text" }` (bun-types already declares *.yaml). */
declare module "*.alloy" {
  const text: string;
  export default text;
}

declare module "*.sh" {
  const text: string;
  export default text;
}
