"""SnapDeals (EmptySectorUpdate and its Poseidon variant): see docs/post.md."""
