// DescribeCluster (API key 60), every version 0–1: cluster id, controller id and the alive brokers with
// their endpoint on the request's listener and rack. Only endpoint_type 1 (brokers) is served; v1
// requests for controllers (2) get UNSUPPORTED_ENDPOINT_TYPE, as a ZooKeeper-mode broker answers.
// Authorized operations (when asked): every operation the cluster resource supports (no authorizer yet).

import { CLUSTER_NAME } from "../../common/acl-binding.js";
import { ErrorCode } from "../../protocol/errors.js";
import { ApiKey } from "../../protocol/generated/api-table.js";
import type { DescribeClusterRequest } from "../../protocol/generated/messages/DescribeClusterRequest.js";
import {
  type DescribeClusterResponse,
  defaultDescribeClusterResponse,
} from "../../protocol/generated/messages/DescribeClusterResponse.js";
import type { BrokerServices } from "../broker-services.js";
import type { HandlerRegistration } from "../handler.js";
import type { RequestContext } from "../request-context.js";
import { brokersOnListener } from "./03-metadata.js";

export function describeClusterHandler(services: BrokerServices): HandlerRegistration {
  const cache = services.metadata;
  return {
    apiKey: ApiKey.DescribeCluster,
    minVersion: 0,
    maxVersion: 1,
    handle: async (
      ctx: RequestContext,
      request: DescribeClusterRequest,
    ): Promise<DescribeClusterResponse> => {
      const base = {
        ...defaultDescribeClusterResponse(),
        endpointType: ctx.apiVersion >= 1 ? request.endpointType : 1,
      };
      if (ctx.apiVersion >= 1 && request.endpointType !== 1) {
        return {
          ...base,
          errorCode: ErrorCode.UNSUPPORTED_ENDPOINT_TYPE,
          errorMessage: `Unsupported endpoint type ${request.endpointType}`,
        };
      }
      return {
        ...base,
        clusterId: cache.clusterId ?? "",
        controllerId: cache.controllerId,
        clusterAuthorizedOperations: services.auth.authorizedOperations(
          ctx,
          "cluster",
          CLUSTER_NAME,
          request.includeClusterAuthorizedOperations,
        ),
        brokers: brokersOnListener(cache, ctx.listenerName).map((b) => ({
          brokerId: b.nodeId,
          host: b.host,
          port: b.port,
          rack: b.rack,
        })),
      };
    },
  };
}
