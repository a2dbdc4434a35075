"""RQ workers: learning (extraction → store) and embedding (batch → blobs → index), fed by Redis queues."""
