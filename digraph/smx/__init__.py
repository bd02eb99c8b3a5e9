"""digraph.smx"""
