"""digraph.paths"""
