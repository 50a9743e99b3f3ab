// DescribeConfigs (API key 32), every version 0–4, Kafka's ConfigHelper.describeConfigs for topics and
// brokers through TopicAdmin: every config (or the requested keys) with its value, read_only, source
// (DYNAMIC_TOPIC_CONFIG 1, DYNAMIC_BROKER_CONFIG 2, DYNAMIC_DEFAULT_BROKER_CONFIG 3, STATIC_BROKER_CONFIG
// 4, DEFAULT_CONFIG 5), is_sensitive (value null), synonyms in Kafka's order (v1+, include_synonyms),
// config_type and documentation (v3+). v0 reports is_default instead of a source. Broker "" describes the
// cluster-wide dynamic defaults; BROKER_LOGGER is answered with no entries.

import { ApiKey } from "../../protocol/generated/api-table.js";
import type { DescribeConfigsRequest } from "../../protocol/generated/messages/DescribeConfigsRequest.js";
import {
  type DescribeConfigsResourceResult,
  type DescribeConfigsResponse,
  defaultDescribeConfigsResponse,
} from "../../protocol/generated/messages/DescribeConfigsResponse.js";
import { configAuthorizationError, Operation, withAuthorized } from "../auth-helper.js";
import type { BrokerServices } from "../broker-services.js";
import type { HandlerRegistration } from "../handler.js";
import { ConfigSource } from "../metadata/config-definitions.js";
import type { RequestContext } from "../request-context.js";

export function describeConfigsHandler(services: BrokerServices): HandlerRegistration {
  return {
    apiKey: ApiKey.DescribeConfigs,
    minVersion: 0,
    maxVersion: 4,
    handle: async (
      ctx: RequestContext,
      request: DescribeConfigsRequest,
    ): Promise<DescribeConfigsResponse> => {
      const v = ctx.apiVersion;
      // KafkaApis: DESCRIBE_CONFIGS on the topic, or on the cluster for a broker.
      const refusal = (r: { resourceType: number; resourceName: string }) =>
        configAuthorizationError(
          services.auth,
          ctx,
          Operation.DESCRIBE_CONFIGS,
          r.resourceType,
          r.resourceName,
        );
      const results = await withAuthorized(
        request.resources,
        (r) => refusal(r) === undefined,
        async (resources) =>
          services.topicAdmin.describeConfigs(
            resources,
            v >= 1 && request.includeSynonyms,
            v >= 3 && request.includeDocumentation,
          ),
        (r) => ({
          resourceType: r.resourceType,
          resourceName: r.resourceName,
          error: refusal(r) ?? null,
          configs: [],
        }),
      );
      return {
        ...defaultDescribeConfigsResponse(),
        results: results.map((r) => ({
          errorCode: r.error ? r.error.code : 0,
          errorMessage: r.error ? r.error.message : null,
          resourceType: r.resourceType,
          resourceName: r.resourceName,
          configs: r.configs.map(
            (c): DescribeConfigsResourceResult => ({
              name: c.name,
              value: c.value,
              readOnly: c.readOnly,
              isDefault: v === 0 ? c.source === ConfigSource.DEFAULT_CONFIG : false,
              configSource: c.source,
              isSensitive: c.isSensitive,
              synonyms:
                v >= 1 ? c.synonyms.map((s) => ({ name: s.name, value: s.value, source: s.source })) : [],
              configType: c.configType,
              documentation: c.documentation,
            }),
          ),
        })),
      };
    },
    errorResponse: (
      request: DescribeConfigsRequest,
      _v: number,
      errorCode: number,
      message: string | null,
    ) => ({
      ...defaultDescribeConfigsResponse(),
      results: request.resources.map((r) => ({
        errorCode,
        errorMessage: message,
        resourceType: r.resourceType,
        resourceName: r.resourceName,
        configs: [],
      })),
    }),
  };
}
