/** An analysis document with objects and references, for the tests of what is built on them. */
const fn = (pkg: string, member: string) => ({
  id: `${pkg}:${member}`,
  package: `npm:${pkg}`,
  name: member || pkg,
  fullName: member ? `${pkg}.${member}` : pkg,
  mangling: "",
  type: member ? "JavaScript Function" : "JavaScript Module",
  typeId: member ? "JS_FUNCTION" : "JS_MODULE",
});
const caller = (name: string) => ({
  id: `src/${name}.js:${name}`,
  name,
  fullName: `src/${name}.js.${name}`,
  type: "JavaScript Function",
  typeId: "JS_FUNCTION",
});
const GET_CONTEXT = {
  id: "log4j:LoggerContext.getContext",
  package: "maven:org.apache.logging.log4j:log4j-core",
  name: "getContext",
  fullName: "org.apache.logging.log4j.core.LoggerContext.getContext",
  mangling: "getContext(boolean) return org.apache.logging.log4j.core.LoggerContext",
  type: "Java Method",
  typeId: "JV_METHOD",
};

const JAVA_CALLER = {
  id: "com.example.web.Logs.init",
  name: "init",
  fullName: "com.example.web.Logs.init",
  type: "Java Method",
  typeId: "JV_METHOD",
};

/**
 * The analysis document the code extractors will produce for a small application calling lodash (and
 * log4j-core), written by hand, shaped as the demo data. `withTemplate`: its render function calls
 * lodash.template (dropped in a later analysis).
 */
export function lodashAnalysis(analyzedAt: string, withTemplate: boolean) {
  const objects = [
    fn("lodash", "merge"),
    fn("lodash", "defaultsDeep"),
    fn("lodash", "get"),
    fn("lodash", "set"),
    ...(withTemplate ? [fn("lodash", "template")] : []),
    fn("lodash.defaultsdeep", ""),
    fn("lodash-es", "template"),
    GET_CONTEXT,
  ];
  const refs: [string, string][] = [
    ["config", "lodash:merge"],
    ["config", "lodash:defaultsDeep"],
    ["util", "lodash:get"],
    ["store", "lodash:set"],
    ...(withTemplate ? ([["render", "lodash:template"]] as [string, string][]) : []),
    ["options", "lodash.defaultsdeep:"],
    ["view", "lodash-es:template"],
  ];
  return {
    application: "webshop",
    analyzedAt,
    packages: [
      { ecosystem: "npm", name: "lodash", version: "4.17.4" },
      { ecosystem: "npm", name: "lodash.defaultsdeep", version: "4.6.0" },
      { ecosystem: "npm", name: "lodash-es", version: "4.17.20" },
      { ecosystem: "maven", name: "org.apache.logging.log4j:log4j-core", version: "2.14.1" },
      { ecosystem: "npm", name: "@babel/traverse", version: "7.22.20" },
    ],
    objects,
    references: [
      ...refs.map(([from, to]) => ({ from: caller(from), to })),
      { from: JAVA_CALLER, to: GET_CONTEXT.id },
    ],
  };
}
