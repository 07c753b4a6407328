"""The storage port and its adapters. Only `engine.storage.open_storage` chooses an adapter;
services see the `Storage` protocol of engine/storage/port.py and write portable SQL."""
