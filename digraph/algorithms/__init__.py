"""digraph.algorithms"""
