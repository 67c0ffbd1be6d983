// Loads the .proto definitions beside this file into grpc-js service definitions. The path is
// '../protocol/' on purpose: it resolves to this folder both from here and from the bundle the
// launcher writes to provider/.build/.
import { fileURLToPath } from 'node:url';
import { loadPackageDefinition, type GrpcObject, type ServiceDefinition } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';

export interface ProtocolServices {
  provider: ServiceDefinition;
  controller: ServiceDefinition;
}

// `../protocol/`, not `./`: it names this folder from the sources and from the bundle in provider/.build/.
const PROTOCOL_DIR = fileURLToPath(new URL('../protocol/', import.meta.url));

function service(root: GrpcObject, packageName: string, name: string): ServiceDefinition {
  const pkg = root[packageName];
  // A package is a plain GrpcObject; a service is a client constructor function carrying `.service`.
  const constructor = pkg && typeof pkg !== 'function' && !('format' in pkg) ? pkg[name] : undefined;
  if (typeof constructor !== 'function') throw new Error(`service ${packageName}.${name} missing from the .proto files`);
  return constructor.service;
}

export function loadProtocol(): ProtocolServices {
  const definition = loadSync(['tfplugin6.proto', 'plugin.proto'], {
    includeDirs: [PROTOCOL_DIR],
    keepCase: true,
    longs: String,
    enums: Number,
    bytes: Buffer,
    defaults: false,
    oneofs: true,
  });
  const root = loadPackageDefinition(definition);
  return { provider: service(root, 'tfplugin6', 'Provider'), controller: service(root, 'plugin', 'GRPCController') };
}
