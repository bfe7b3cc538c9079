#pragma once

// Every gRPC metadata key tollgated and its clients share (docs/api.md, docs/ha.md): the server
// sets them in one place each, and the C++ client (clients/cpp), the CLI and the Python client
// read them by these names, never by a status message's text.

namespace tollgate::api {

// Request: `Bearer TOKEN` (static tokens and OIDC ID tokens; docs/security.md).
inline constexpr char kAuthorizationMetadataKey[] = "authorization";

// Trailer of a follower replica's refusal (UNAVAILABLE): the call did nothing and belongs on
// the leader. Present on every such refusal, whether or not a leader is known.
inline constexpr char kNotLeaderMetadataKey[] = "tollgate-not-leader";
// Trailer beside it: the leader's advertised HOST:PORT, when one is elected.
inline constexpr char kLeaderMetadataKey[] = "tollgate-leader";

// Response of a read served by a follower: the store revision it answered at.
inline constexpr char kRevisionMetadataKey[] = "tollgate-revision";
// Request: the lowest revision a follower may answer from (never an older answer).
inline constexpr char kMinRevisionMetadataKey[] = "tollgate-min-revision";
// Response of a follower that cannot confirm its copy is current: the revision it answered at,
// and why.
inline constexpr char kStaleRevisionMetadataKey[] = "tollgate-stale-revision";
inline constexpr char kStaleReasonMetadataKey[] = "tollgate-stale-reason";

// Response, every RPC: which store (and which life of it, bumped by a restore or accepted data
// loss) the revisions belong to, so a watcher knows when to re-list.
inline constexpr char kStoreIdMetadataKey[] = "tollgate-store-id";
inline constexpr char kStoreEpochMetadataKey[] = "tollgate-store-epoch";

}  // namespace tollgate::api
