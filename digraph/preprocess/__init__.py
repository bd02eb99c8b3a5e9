"""digraph.preprocess"""
