//! Runtime configuration of servers and of the client, and loaders for the formats users already
//! write. (Being built.)
