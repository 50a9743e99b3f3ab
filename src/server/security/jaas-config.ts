// The JAAS configuration parser moved to src/common/jaas-config.ts (the clients' sasl.jaas.config and the
// broker's inter-broker credentials use it too); re-exported here for the server's SASL modules.

export { JaasConfigError, type JaasLoginModule, parseJaasConfig } from "../../common/jaas-config.js";
