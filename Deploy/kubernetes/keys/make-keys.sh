#!/bin/sh
# Makes the CURVE keys the Kubernetes manifests need, in this directory (keys/kustomization.yaml turns them into
# Secrets): broker, worker and a first client's key pair, and the broker's allowlists workers.keys and clients.keys.
# Existing keys are kept, so running it again changes nothing. Give client.secret and broker.pub to your client
# (concierge send --curve-server-key broker.pub --curve-secret-key client.secret ...); add other clients' public keys
# to clients.keys, one per line.
#   Deploy/kubernetes/keys/make-keys.sh            # CONCIERGE=path/to/concierge to use another binary
set -eu
cd "$(dirname "$0")"
concierge=${CONCIERGE:-concierge}
umask 077
for name in broker worker client; do
  [ -e "$name.secret" ] || "$concierge" keygen --out "$name" --comment "concierge on Kubernetes: $name" >/dev/null
done
[ -e workers.keys ] || cp worker.pub workers.keys
[ -e clients.keys ] || cp client.pub clients.keys
echo "make-keys: keys in $(pwd); give client.secret and broker.pub to your first client" >&2
