"""Retrieval: hybrid search (search), the keyword retriever and its bounds (keyword, query),
vectors (vectors, vector_matrix), fusion, filters and explain."""
