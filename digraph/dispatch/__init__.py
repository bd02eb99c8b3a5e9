"""digraph.dispatch"""
